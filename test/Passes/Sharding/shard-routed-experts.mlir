// RUN: shardc-opt %s --split-input-file --shardc-shard --shardc-partition | FileCheck %s

// --ep 2 on a batch of 4: the tokens and the experts split over ep together
// (the search's kRouted strategy), entries exchanged inside graph.moe: each
// device routes its 16 tokens, holds 4 of the 8 experts' weights, and no
// collective completes the layer.
// CHECK-LABEL: func.func @main
// CHECK: graph.weight "gate.stacked" {{.*}}dist.weight_shard = #dist.sharding<@mesh, [{"ep"}, {}, {}]>{{.*}} : tensor<4x64x128xf32>
// CHECK: graph.weight "down.stacked" {{.*}}dist.weight_shard = #dist.sharding<@mesh, [{"ep"}, {}, {}]>{{.*}} : tensor<4x128x64xf32>
// CHECK: dist.all_slice %{{.*}} on @mesh ["ep"] dim = 0 : tensor<4x8x64xf32> -> tensor<2x8x64xf32>
// CHECK: graph.moe {{.*}} {activation = "silu", exchange = true, expert_axes = ["ep"], experts = 8 : i64} : (tensor<16x64xf32>, tensor<16x2xi64>, tensor<16x2xf32>, tensor<4x64x128xf32>, tensor<4x64x128xf32>, tensor<4x128x64xf32>) -> tensor<16x64xf32>
// CHECK-NOT: dist.all_reduce
// CHECK: dist.all_gather
// CHECK-NOT: dist.all_reduce
module {
  dist.mesh @mesh = <["ep"=2]>
  func.func @main(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
    %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<64x8xf32>
    %gate = graph.weight "gate.stacked" {file = "w.bin", offset = 2048 : i64, part_offsets = array<i64: 2048, 34816, 67584, 100352, 133120, 165888, 198656, 231424>, size = 262144 : i64} : tensor<8x64x128xf32>
    %up = graph.weight "up.stacked" {file = "w.bin", offset = 264192 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
    %down = graph.weight "down.stacked" {file = "w.bin", offset = 526336 : i64, size = 262144 : i64} : tensor<8x128x64xf32>
    %rows = graph.reshape %x : (tensor<4x8x64xf32>) -> tensor<32x64xf32>
    %logits = graph.linear %rows, %router : (tensor<32x64xf32>, tensor<64x8xf32>) -> tensor<32x8xf32>
    %probs = graph.softmax %logits {axis = 1 : i64} : tensor<32x8xf32>
    %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi64>)
    %y = graph.moe %rows, %index, %top, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu"} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<32x64xf32>
    %out = graph.reshape %y : (tensor<32x64xf32>) -> tensor<4x8x64xf32>
    return %out : tensor<4x8x64xf32>
  }
}

// -----

// --tp 2: the experts split over tp with the tokens whole on every device
// (no exchange): each device's experts make a partial sum, completed by one
// all-reduce.
// CHECK-LABEL: func.func @main
// CHECK: graph.moe {{.*}} {activation = "silu", expert_axes = ["tp"], experts = 8 : i64} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<4x64x128xf32>, tensor<4x64x128xf32>, tensor<4x128x64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT: dist.all_reduce %{{.*}} on @mesh ["tp"] : tensor<32x64xf32>
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @main(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
    %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<64x8xf32>
    %gate = graph.weight "gate.stacked" {file = "w.bin", offset = 2048 : i64, part_offsets = array<i64: 2048, 34816, 67584, 100352, 133120, 165888, 198656, 231424>, size = 262144 : i64} : tensor<8x64x128xf32>
    %up = graph.weight "up.stacked" {file = "w.bin", offset = 264192 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
    %down = graph.weight "down.stacked" {file = "w.bin", offset = 526336 : i64, size = 262144 : i64} : tensor<8x128x64xf32>
    %rows = graph.reshape %x : (tensor<4x8x64xf32>) -> tensor<32x64xf32>
    %logits = graph.linear %rows, %router : (tensor<32x64xf32>, tensor<64x8xf32>) -> tensor<32x8xf32>
    %probs = graph.softmax %logits {axis = 1 : i64} : tensor<32x8xf32>
    %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi64>)
    %y = graph.moe %rows, %index, %top, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu"} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<32x64xf32>
    %out = graph.reshape %y : (tensor<32x64xf32>) -> tensor<4x8x64xf32>
    return %out : tensor<4x8x64xf32>
  }
}

// -----

// --dp 2 alone never splits the experts (dp does not split weights): the
// tokens split, every expert on every device, no exchange.
// CHECK-LABEL: func.func @main
// CHECK: graph.moe {{.*}} {activation = "silu", experts = 8 : i64} : (tensor<16x64xf32>, tensor<16x2xi64>, tensor<16x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<16x64xf32>
module {
  dist.mesh @mesh = <["dp"=2]>
  func.func @main(%x: tensor<4x8x64xf32>) -> tensor<4x8x64xf32> {
    %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<64x8xf32>
    %gate = graph.weight "gate.stacked" {file = "w.bin", offset = 2048 : i64, part_offsets = array<i64: 2048, 34816, 67584, 100352, 133120, 165888, 198656, 231424>, size = 262144 : i64} : tensor<8x64x128xf32>
    %up = graph.weight "up.stacked" {file = "w.bin", offset = 264192 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
    %down = graph.weight "down.stacked" {file = "w.bin", offset = 526336 : i64, size = 262144 : i64} : tensor<8x128x64xf32>
    %rows = graph.reshape %x : (tensor<4x8x64xf32>) -> tensor<32x64xf32>
    %logits = graph.linear %rows, %router : (tensor<32x64xf32>, tensor<64x8xf32>) -> tensor<32x8xf32>
    %probs = graph.softmax %logits {axis = 1 : i64} : tensor<32x8xf32>
    %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<32x8xf32>) -> (tensor<32x2xf32>, tensor<32x2xi64>)
    %y = graph.moe %rows, %index, %top, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu"} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<32x64xf32>
    %out = graph.reshape %y : (tensor<32x64xf32>) -> tensor<4x8x64xf32>
    return %out : tensor<4x8x64xf32>
  }
}
