// RUN: shardc-opt %s --split-input-file --shardc-pretranspose-weights | FileCheck %s

// A linear reading its weight transposed reads a copy stored [K, N]: here a
// rank's box of a tp-sharded weight, whose box and sharding stay as stored.
// The weight is not kept when nothing else reads it, and two linears of
// one weight share the copy.
// CHECK-LABEL: func.func @main
// CHECK-NOT: tensor<6x8xf32>
// CHECK: %[[T:.*]] = graph.weight "w" {box_offsets = array<i64: 0, 0>, dist.weight_shard = #dist.sharding<@mesh, [{"tp"}, {}]>, file = "m.onnx", graph.transposed, offset = 0 : i64, size = 384 : i64, stored_shape = array<i64: 12, 8>} : tensor<8x6xf32>
// CHECK: graph.linear %{{.*}}, %[[T]] : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
// CHECK: graph.linear %{{.*}}, %[[T]] : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @main(%x: tensor<2x8xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>) {
    %w = graph.weight "w" {box_offsets = array<i64: 0, 0>, dist.weight_shard = #dist.sharding<@mesh, [{"tp"}, {}]>, file = "m.onnx", offset = 0, size = 384, stored_shape = array<i64: 12, 8>} : tensor<6x8xf32>
    %a = graph.linear %x, %w {transpose_weight = true} : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
    %b = graph.linear %x, %w {transpose_weight = true} : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
    return %a, %b : tensor<2x6xf32>, tensor<2x6xf32>
  }
}

// -----

// A weight tied to an embedding keeps its orientation for the gather; a
// weight read as stored, or with repeated blocks, is left alone.
// CHECK-LABEL: func.func @tied
// CHECK-DAG: %[[E:.*]] = graph.weight "wte" {file = "m.onnx", offset = 0 : i64, size = 320 : i64} : tensor<10x8xf32>
// CHECK-DAG: %[[T:.*]] = graph.weight "wte" {file = "m.onnx", graph.transposed, offset = 0 : i64, size = 320 : i64} : tensor<8x10xf32>
// CHECK: graph.gather %[[E]]
// CHECK: graph.linear %{{.*}}, %[[T]] : (tensor<3x8xf32>, tensor<8x10xf32>) -> tensor<3x10xf32>
// CHECK: graph.linear %{{.*}}, %{{.*}} : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
// CHECK: graph.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<3x8xf32>, tensor<4x8xf32>) -> tensor<3x4xf32>
func.func @tied(%ids: tensor<3xi64>) -> (tensor<3x10xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %wte = graph.weight "wte" {file = "m.onnx", offset = 0, size = 320} : tensor<10x8xf32>
  %h = graph.gather %wte, %ids {axis = 0 : i64} : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  %logits = graph.linear %h, %wte {transpose_weight = true} : (tensor<3x8xf32>, tensor<10x8xf32>) -> tensor<3x10xf32>
  %p = graph.weight "proj" {file = "m.onnx", offset = 704, size = 128} : tensor<8x4xf32>
  %b = graph.linear %h, %p : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %r = graph.weight "kv" {file = "m.onnx", offset = 832, size = 64, stored_shape = array<i64: 2, 8>, box_offsets = array<i64: 0, 0>, repeat_blocks = array<i64: 0, 1, 2>} : tensor<4x8xf32>
  %c = graph.linear %h, %r {transpose_weight = true} : (tensor<3x8xf32>, tensor<4x8xf32>) -> tensor<3x4xf32>
  return %logits, %b, %c : tensor<3x10xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
