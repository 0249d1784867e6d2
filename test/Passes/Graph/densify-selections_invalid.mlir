// RUN: shardc-opt %s --split-input-file --shardc-densify-selections --verify-diagnostics

// Counting the selected elements mixes the entries: the count is data-dependent.
func.func @count(%mask: tensor<4xi1>) -> tensor<1xi64> {
  // expected-error @+1 {{NonZero selects a number of elements known only at run time; shardc compiles it when each selected entry is used on its own and scattered back (MoE routing), but (reduce_sum) reduces over the entries}}
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  %count = graph.reduce_sum %nz {axes = array<i64: 1>, keepdims = false} : (tensor<1x4xi64>) -> tensor<1xi64>
  return %count : tensor<1xi64>
}

// -----

// The selection is the model's output: its shape is the data's.
func.func @output(%mask: tensor<4xi1>) -> tensor<1x4xi64> {
  // expected-error @+1 {{but (return) makes the entries a model output}}
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  return %nz : tensor<1x4xi64>
}

// -----

// Without a reduction, the scatter overwrites data that is not zeros: the
// unselected entries would overwrite it too.
func.func @overwrite(%mask: tensor<4xi1>, %acc: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{but (scatter_nd) writes into a tensor that is not zeros without adding}}
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  %token = graph.transpose %nz {perm = array<i64: 1, 0>} : (tensor<1x4xi64>) -> tensor<4x1xi64>
  %rows = graph.gather_nd %x, %token : (tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4x8xf32>
  %sum = graph.scatter_nd %acc, %token, %rows {reduction = 0 : i32} : (tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %sum : tensor<4x8xf32>
}

// -----

// A multiplying scatter cannot take zeros for the unselected entries.
func.func @multiply(%mask: tensor<4xi1>, %acc: tensor<4x8xf32>, %x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{writes into a tensor that is not zeros without adding}}
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  %token = graph.transpose %nz {perm = array<i64: 1, 0>} : (tensor<1x4xi64>) -> tensor<4x1xi64>
  %rows = graph.gather_nd %x, %token : (tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4x8xf32>
  %sum = graph.scatter_nd %acc, %token, %rows {reduction = 2 : i32} : (tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %sum : tensor<4x8xf32>
}

// -----

// A contraction over the entries (entries times entries) mixes them.
func.func @contract(%mask: tensor<4xi1>, %x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{but (matmul) contracts over the entries}}
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  %token = graph.reshape %nz : (tensor<1x4xi64>) -> tensor<4xi64>
  %rows = graph.gather %x, %token {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %t = graph.transpose %rows {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %gram = graph.matmul %t, %rows : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %gram : tensor<8x8xf32>
}
