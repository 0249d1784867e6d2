// RUN: shardc-opt %s --split-input-file --shardc-raise-batch-gathers | FileCheck %s

// dynamo's attention mask: mask[b, position] for each row b, the tuples
// (b, p). The row becomes a batch dim of the gather; the tuples keep p.
// CHECK-LABEL: func.func @mask
// CHECK: %[[P:.*]] = graph.constant dense<{{\[\[\[}}0], [1], [2]], {{\[\[}}0], [1], [2]]]> : tensor<2x3x1xi64>
// CHECK: %[[G:.*]] = graph.gather_nd %arg0, %[[P]] {batch_dims = 1 : i64} : (tensor<2x3xi1>, tensor<2x3x1xi64>) -> tensor<2x3xi1>
// CHECK: return %[[G]]
func.func @mask(%mask: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %i = graph.constant dense<[[[0, 0], [0, 1], [0, 2]], [[1, 0], [1, 1], [1, 2]]]> : tensor<2x3x2xi64>
  %g = graph.gather_nd %mask, %i : (tensor<2x3xi1>, tensor<2x3x2xi64>) -> tensor<2x3xi1>
  return %g : tensor<2x3xi1>
}

// -----

// A row counted from the end (-1 for row 1) names it too; two leading
// components that name their own coordinates make two batch dims.
// CHECK-LABEL: func.func @two
// CHECK: %[[P:.*]] = graph.constant dense<{{\[\[\[}}1], [0]], {{\[\[}}0], [1]]]> : tensor<2x2x1xi64>
// CHECK: graph.gather_nd %arg0, %[[P]] {batch_dims = 2 : i64} : (tensor<2x2x2xf32>, tensor<2x2x1xi64>) -> tensor<2x2xf32>
func.func @two(%x: tensor<2x2x2xf32>) -> tensor<2x2xf32> {
  %i = graph.constant dense<[[[0, 0, 1], [0, 1, 0]], [[-1, 0, 0], [1, -1, 1]]]> : tensor<2x2x3xi64>
  %g = graph.gather_nd %x, %i : (tensor<2x2x2xf32>, tensor<2x2x3xi64>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}

// -----

// Tuples that read another row (row 1 reads row 0), a gather whose tuple
// has one component, and indices computed at run time stay as they are.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: batch_dims
// CHECK: return
func.func @kept(%mask: tensor<2x3xi1>, %ids: tensor<2x1xi64>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  %i = graph.constant dense<[[[0, 0], [0, 1], [0, 2]], [[0, 0], [1, 1], [1, 2]]]> : tensor<2x3x2xi64>
  %a = graph.gather_nd %mask, %i : (tensor<2x3xi1>, tensor<2x3x2xi64>) -> tensor<2x3xi1>
  %rows = graph.constant dense<[[0], [1]]> : tensor<2x1xi64>
  %b = graph.gather_nd %mask, %rows : (tensor<2x3xi1>, tensor<2x1xi64>) -> tensor<2x3xi1>
  %c = graph.gather_nd %mask, %ids : (tensor<2x3xi1>, tensor<2x1xi64>) -> tensor<2x3xi1>
  return %a, %b, %c : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}
