// RUN: shardc-opt %s --split-input-file --shardc-accumulate-microbatches | FileCheck %s

// A training step in 2 micro-batches on dp=2: the gradient's sum over mb and
// dp becomes an accumulator the loop adds to, all-reduced over dp once after
// the loop, where the update (and what only it reads: the learning rate)
// runs. The forward and backward stay in the loop.
module attributes {graph.training = {loss = "mse:y"}} {
  dist.mesh @mesh = <["mb"=2, "dp"=2]>
  // CHECK-LABEL: func.func @main
  func.func @main(%x: tensor<8x4xf32> {graph.name = "x"}) -> (tensor<f32> {graph.name = "loss"}) {
    // CHECK: %[[ACC:.*]] = graph.weight "microbatch_sum.1" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    // CHECK: %[[LACC:.*]] = graph.weight "microbatch_sum.0" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 4 : i64} : tensor<f32>
    // CHECK: %[[W:.*]] = graph.weight "w"
    %w = graph.weight "w" {file = "w.bin", graph.train = "param", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    // CHECK: %[[S:.*]] = dist.all_slice
    %s = dist.all_slice %x on @mesh ["mb", "dp"] dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
    // CHECK: %[[T:.*]] = graph.transpose %[[S]]
    %t = graph.transpose %s {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
    // CHECK: %[[G:.*]] = graph.matmul %[[T]], %[[S]]
    %g = graph.matmul %t, %s : (tensor<4x2xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    // CHECK: %[[L:.*]] = graph.reduce_sum %[[S]]
    %l = graph.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
    // CHECK: %[[LSUM:.*]] = graph.add %[[LACC]], %[[L]]
    // CHECK: graph.assign %[[LACC]], %[[LSUM]]
    %lt = dist.all_reduce %l on @mesh ["mb", "dp"] : tensor<f32>
    // CHECK: %[[SUM:.*]] = graph.add %[[ACC]], %[[G]]
    // CHECK: graph.assign %[[ACC]], %[[SUM]]
    // CHECK: exec.microbatch_loop_end 2
    // CHECK: %[[LT:.*]] = dist.all_reduce %[[LACC]] on @mesh ["dp"]
    // CHECK: %[[GT:.*]] = dist.all_reduce %[[ACC]] on @mesh ["dp"]
    %gt = dist.all_reduce %g on @mesh ["mb", "dp"] : tensor<4x4xf32>
    // CHECK: %[[LR:.*]] = graph.constant
    %lr = graph.constant dense<0.1> : tensor<f32>
    // CHECK: %[[STEP:.*]] = graph.mul %[[GT]], %[[LR]]
    %step = graph.mul %gt, %lr : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
    // CHECK: %[[NEW:.*]] = graph.sub %[[W]], %[[STEP]]
    %new = graph.sub %w, %step : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    // CHECK: graph.assign %[[W]], %[[NEW]]
    graph.assign %w, %new : tensor<4x4xf32>
    // CHECK: return %[[LT]]
    return %lt : tensor<f32>
  }
}

// -----

// Without a training step, or without mb, nothing changes.
module {
  dist.mesh @mesh = <["mb"=2, "dp"=2]>
  // CHECK-LABEL: func.func @inference
  // CHECK: dist.all_reduce %{{.*}} on @mesh ["mb", "dp"]
  // CHECK-NOT: microbatch_loop_end
  func.func @inference(%x: tensor<8x4xf32>) -> tensor<f32> {
    %s = dist.all_slice %x on @mesh ["mb", "dp"] dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
    %l = graph.reduce_sum %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
    %lt = dist.all_reduce %l on @mesh ["mb", "dp"] : tensor<f32>
    return %lt : tensor<f32>
  }
}
