// RUN: shardc-opt %s --split-input-file --shardc-accumulate-microbatches --verify-diagnostics

// The update reads one micro-batch's activations besides the summed
// gradient: after the loop only the last micro-batch's would be left.
module attributes {graph.training = {loss = "mse:y"}} {
  dist.mesh @mesh = <["mb"=2]>
  func.func @main(%x: tensor<4x4xf32> {graph.name = "x"}) -> (tensor<f32> {graph.name = "loss"}) {
    %w = graph.weight "w" {file = "w.bin", graph.train = "param", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    %s = dist.all_slice %x on @mesh ["mb"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
    %t = graph.transpose %s {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
    %g = graph.matmul %t, %s : (tensor<4x2xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
    %gt = dist.all_reduce %g on @mesh ["mb"] : tensor<4x4xf32>
    // expected-error @+1 {{runs once per step, after the micro-batches, but reads a value of one micro-batch (not summed over them)}}
    %mixed = graph.add %gt, %g : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    graph.assign %w, %mixed : tensor<4x4xf32>
    %l = graph.reduce_sum %gt {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x4xf32>) -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A step that sums nothing over its micro-batches updates from one of them.
module attributes {graph.training = {loss = "mse:y"}} {
  dist.mesh @mesh = <["mb"=2]>
  // expected-error @+1 {{sums nothing over the micro-batches}}
  func.func @main(%x: tensor<4x4xf32> {graph.name = "x"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
    %s = dist.all_slice %x on @mesh ["mb"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
    return %s : tensor<2x4xf32>
  }
}
