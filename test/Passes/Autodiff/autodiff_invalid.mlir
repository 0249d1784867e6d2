// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y" --verify-diagnostics

// expected-error @+1 {{--loss mse:y: the model has no output 'y'; its outputs are 'logits'}}
func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}) -> (tensor<2x4xf32> {graph.name = "logits"}) {
  return %x : tensor<2x4xf32>
}

// -----

// expected-error @+1 {{--loss mse:y: nothing to train: no float weight the loss depends on is left trainable (check --freeze)}}
func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
  %w = graph.weight "unused" {file = "w.bin", offset = 0 : i64, size = 32 : i64} : tensor<2x4xf32>
  return %x : tensor<2x4xf32>
}

// -----

// An op without a rule on the path from a weight to the loss is named.
func.func @main() -> (tensor<2x4xf32> {graph.name = "y"}) {
  %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 32 : i64} : tensor<2x4xf32>
  // expected-error @+1 {{'graph.cumsum' op has no gradient rule, and the loss depends on a trained weight through it}}
  %y = graph.cumsum %w {axis = 1 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

func.func @main() -> (tensor<2x4xf32> {graph.name = "y"}) {
  %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 32 : i64} : tensor<2x4xf32>
  // expected-error @+1 {{'graph.slice' op cannot be differentiated for training: a slice with a negative step has no gradient rule yet}}
  %y = graph.slice %w {starts = array<i64: 0, 3>, ends = array<i64: 2, -1>, steps = array<i64: 1, -1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Integer outputs cannot be a loss.
// expected-error @+1 {{--loss mse:y: the output is 'i64'; training needs float32}}
func.func @main(%x: tensor<2xi64> {graph.name = "x"}) -> (tensor<2xi64> {graph.name = "y"}) {
  return %x : tensor<2xi64>
}
