// RUN: shardc-opt %s --verify-diagnostics -o /dev/null

// The verifier reads a transposed weight's box in the stored orientation.
func.func @bad(%x: tensor<2x8xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{box of [5, 8] at [4, 0] does not fit in the stored [8, 8]}}
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 256, stored_shape = array<i64: 8, 8>, box_offsets = array<i64: 4, 0>, graph.transposed} : tensor<8x5xf32>
  %y = graph.linear %x, %w : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
