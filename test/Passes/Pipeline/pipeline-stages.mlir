// RUN: shardc-opt %s --split-input-file --shardc-pipeline-stages | FileCheck %s

// Four equal layers on two stages: the cut falls in the middle. The weights
// go with the layers that read them; the mask, which only an input derives,
// is computed again by each stage that uses it instead of being sent; the
// first stage takes every input, the last returns the results.
module {
  // CHECK: dist.pipeline {dist.step_seconds = {{.*}}, microbatches = 4 : i64, pipeline_ranks = 2 : i64
  dist.pipeline {microbatches = 4 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  // CHECK-LABEL: func.func @stage0
  // CHECK-SAME: (%[[X:.*]]: tensor<4x64xf32> {graph.name = "x"}, %[[M:.*]]: tensor<4x64xf32> {graph.name = "mask"})
  // CHECK-SAME: dist.stage = 0 : i64
  // CHECK-SAME: dist.stage_estimate = {activation_bytes = {{[0-9]+}} : i64, seconds = {{.*}}, send_seconds = {{.*}}, weight_bytes = 32768 : i64}
  // CHECK: graph.weight "w0"
  // CHECK: graph.neg %[[M]]
  // CHECK: graph.weight "w1"
  // CHECK-NOT: graph.weight
  // CHECK: dist.send %{{.*}} to stage 1 transfer 0 : tensor<4x64xf32>
  // CHECK-NEXT: return
  // CHECK-LABEL: func.func @stage1
  // CHECK-SAME: (%[[M1:.*]]: tensor<4x64xf32> {graph.name = "mask"}) -> (tensor<4x64xf32> {graph.name = "y"})
  // CHECK-SAME: dist.stage = 1 : i64
  // CHECK: dist.recv from stage 0 transfer 0 : tensor<4x64xf32>
  // CHECK-DAG: graph.neg %[[M1]]
  // CHECK-DAG: graph.weight "w2"
  // CHECK: graph.weight "w3"
  // CHECK: %[[Y:.*]] = graph.add
  // CHECK-NEXT: return %[[Y]]
  // CHECK-NOT: func.func @main
  func.func @main(%x: tensor<4x64xf32> {graph.name = "x"}, %mask: tensor<4x64xf32> {graph.name = "mask"}) -> (tensor<4x64xf32> {graph.name = "y"}) {
    %w0 = graph.weight "w0" {file = "w.bin", offset = 0 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %h0 = graph.linear %x, %w0 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %n = graph.neg %mask : tensor<4x64xf32>
    %a0 = graph.add %h0, %n : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %w1 = graph.weight "w1" {file = "w.bin", offset = 16384 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %h1 = graph.linear %a0, %w1 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %a1 = graph.add %h1, %n : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %w2 = graph.weight "w2" {file = "w.bin", offset = 32768 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %h2 = graph.linear %a1, %w2 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %a2 = graph.add %h2, %n : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    %w3 = graph.weight "w3" {file = "w.bin", offset = 49152 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %h3 = graph.linear %a2, %w3 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %a3 = graph.add %h3, %n : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    return %a3 : tensor<4x64xf32>
  }
}

// -----

// A skip connection over two stages is sent straight to the stage that
// reads it; a value two later stages read is sent to each. A forced cut
// (--pp-split "l0") ends stage 0 after node l0, however unbalanced. The
// received value keeps its sharding for partitioning.
module {
  dist.mesh @mesh = <["tp"=2]>
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 3 : i64, schedule = "gpipe", splits = ["l0"], virtual_stages = 1 : i64}
  // CHECK-LABEL: func.func @stage0
  // CHECK: %[[E:.*]] = graph.linear
  // CHECK-NEXT: dist.send %[[E]] to stage 1 transfer 0
  // CHECK-NEXT: dist.send %[[E]] to stage 2 transfer 2
  // CHECK-NEXT: return
  // CHECK-LABEL: func.func @stage1
  // CHECK: dist.recv from stage 0 transfer 0 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]}
  // CHECK: dist.send {{.*}} to stage 2 transfer 1
  // CHECK-LABEL: func.func @stage2
  // CHECK: dist.recv from stage 1 transfer 1
  // CHECK: %[[SKIP:.*]] = dist.recv from stage 0 transfer 2
  // CHECK: graph.add {{.*}}, %[[SKIP]]
  func.func @main(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %w0 = graph.weight "w0" {file = "w.bin", offset = 0 : i64, size = 16384 : i64, dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<64x64xf32>
    %e = graph.linear %x, %w0 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32> loc(fused<"MatMul">["l0"("m.onnx":0:0)])
    %w1 = graph.weight "w1" {file = "w.bin", offset = 16384 : i64, size = 16384 : i64, dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<64x64xf32>
    %h1 = graph.linear %e, %w1 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %w2 = graph.weight "w2" {file = "w.bin", offset = 32768 : i64, size = 16384 : i64, dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<64x64xf32>
    %h2 = graph.linear %h1, %w2 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %w3 = graph.weight "w3" {file = "w.bin", offset = 49152 : i64, size = 16384 : i64, dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<64x64xf32>
    %h3 = graph.linear %h2, %w3 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %w4 = graph.weight "w4" {file = "w.bin", offset = 65536 : i64, size = 16384 : i64, dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<64x64xf32>
    %h4 = graph.linear %h3, %w4 {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    %s = graph.add %h4, %e {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
    return %s : tensor<4x64xf32>
  }
}

// -----

// Without dist.pipeline nothing changes.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: dist.stage
func.func @untouched(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
