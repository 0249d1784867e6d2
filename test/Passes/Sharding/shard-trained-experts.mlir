// RUN: shardc-opt %s --shardc-autodiff="loss=mse:y optimizer=sgd untie=true" --shardc-shard | FileCheck %s

// A training step of routed experts at --ep 2. The forward's graph.moe
// stores each expert weight split by experts over ep; the update that writes
// it (sub, then graph.assign) must take that storage as it is, so ops on an
// expert's weight may split it over ep rather than the batch (without that
// no sharding of the step exists). The backward's dense matmuls read the
// weights as the costs choose. (untie=true: the ties' byte comparison would
// read w.bin, which this test has not.)
// CHECK-LABEL: func.func @main
// CHECK: %[[GATE:.*]] = graph.weight "gate.stacked" {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: %[[UP:.*]] = graph.weight "up.stacked" {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: %[[DOWN:.*]] = graph.weight "down.stacked" {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: graph.moe %{{.*}}, experts(%[[GATE]], %[[UP]], %[[DOWN]])
// CHECK: %[[NEW_GATE:.*]] = graph.sub %[[GATE]], %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: %[[NEW_UP:.*]] = graph.sub %[[UP]], %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: %[[NEW_DOWN:.*]] = graph.sub %[[DOWN]], %{{.*}} {dist.shardings = [#dist.sharding<@mesh, [{"ep"}, {}, {}]>]
// CHECK: graph.assign %[[GATE]], %[[NEW_GATE]]
// CHECK: graph.assign %[[UP]], %[[NEW_UP]]
// CHECK: graph.assign %[[DOWN]], %[[NEW_DOWN]]
module {
  dist.mesh @mesh = <["ep"=2]>
  func.func @main(%x: tensor<4x8x64xf32> {graph.name = "x"}) -> (tensor<4x8x64xf32> {graph.name = "y"}) {
    %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<64x8xf32>
    %gate = graph.weight "gate.stacked" {file = "w.bin", offset = 2048 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
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
