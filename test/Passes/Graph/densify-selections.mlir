// RUN: shardc-opt %s --split-input-file --shardc-densify-selections | FileCheck %s

// CHECK-NOT: graph.nonzero

// Mixtral's routing as transformers 4.4x writes it, for one expert: the
// (slot, token) pairs that chose it are selected, their tokens gathered and
// scaled by the pair's weight, and added back by token (index_add exported
// as a scatter without reduction into zeros). The selection becomes every
// coordinate of the [2, 3] mask; the scatter adds, and the unselected
// entries' updates are zeros.
// CHECK-LABEL: func.func @index_add
// CHECK: %[[GRID:.*]] = graph.constant dense<{{\[\[0, 0, 0, 1, 1, 1\], \[0, 1, 2, 0, 1, 2\]\]}}> : tensor<2x6xi64>
// CHECK: %[[SELECTED:.*]] = graph.cast %arg0 : tensor<2x3xi64> to tensor<2x3xi1>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[SELECTED]] : (tensor<2x3xi1>) -> tensor<6xi1>
// CHECK: %[[TOKENS:.*]]:2 = graph.split %[[GRID]]
// CHECK: %[[TOKEN:.*]] = graph.reshape %[[TOKENS]]#1 : (tensor<1x6xi64>) -> tensor<6xi64>
// CHECK: %[[ROWS:.*]] = graph.gather %arg1, %[[TOKEN]] {axis = 0 : i64}
// CHECK: %[[SCALED:.*]] = graph.mul %[[ROWS]]
// CHECK: %[[PER_ENTRY:.*]] = graph.reshape %[[FLAT]] : (tensor<6xi1>) -> tensor<6x1xi1>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[MASKED:.*]] = graph.where %[[PER_ENTRY]], %[[SCALED]], %[[ZERO]] : (tensor<6x1xi1>, tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>
// CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %[[MASKED]] {axis = 0 : i64, reduction = 1 : i32}
func.func @index_add(%mask: tensor<2x3xi64>, %x: tensor<3x4xf32>, %w: tensor<6xf32>) -> tensor<3x4xf32> {
  %nz = graph.nonzero %mask : (tensor<2x3xi64>) -> tensor<2x6xi64>
  %parts:2 = graph.split %nz {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x6xi64>) -> (tensor<1x6xi64>, tensor<1x6xi64>)
  %token = graph.reshape %parts#1 : (tensor<1x6xi64>) -> tensor<6xi64>
  %rows = graph.gather %x, %token {axis = 0 : i64} : (tensor<3x4xf32>, tensor<6xi64>) -> tensor<6x4xf32>
  %slot = graph.reshape %parts#0 : (tensor<1x6xi64>) -> tensor<6xi64>
  %three = graph.constant dense<3> : tensor<i64>
  %pair0 = graph.mul %slot, %three : (tensor<6xi64>, tensor<i64>) -> tensor<6xi64>
  %pair = graph.add %pair0, %token : (tensor<6xi64>, tensor<6xi64>) -> tensor<6xi64>
  %weight0 = graph.gather %w, %pair {axis = 0 : i64} : (tensor<6xf32>, tensor<6xi64>) -> tensor<6xf32>
  %weight = graph.reshape %weight0 : (tensor<6xf32>) -> tensor<6x1xf32>
  %scaled = graph.mul %rows, %weight : (tensor<6x4xf32>, tensor<6x1xf32>) -> tensor<6x4xf32>
  %target0 = graph.reshape %token : (tensor<6xi64>) -> tensor<6x1xi64>
  %target = graph.expand %target0 : (tensor<6x1xi64>) -> tensor<6x4xi64>
  %zeros = graph.constant dense<0.0> : tensor<3x4xf32>
  %sum = graph.scatter_elements %zeros, %target, %scaled {axis = 0 : i64, reduction = 0 : i32} : (tensor<3x4xf32>, tensor<6x4xi64>, tensor<6x4xf32>) -> tensor<3x4xf32>
  return %sum : tensor<3x4xf32>
}

// -----

// index_put with accumulate (ScatterND, reduction add) into any tensor: the
// data need not be zeros; a bool mask is used as it is. The entries run
// through a linear layer (the expert), which contracts another dim.
// CHECK-LABEL: func.func @scatter_nd_add
// CHECK-NOT: graph.cast
// CHECK: graph.linear
// CHECK: %[[PER_ENTRY:.*]] = graph.reshape %arg0 : (tensor<4xi1>) -> tensor<4x1xi1>
// CHECK: %[[MASKED:.*]] = graph.where %[[PER_ENTRY]]
// CHECK: graph.scatter_nd %arg1, %{{.*}}, %[[MASKED]] {reduction = 1 : i32}
func.func @scatter_nd_add(%mask: tensor<4xi1>, %acc: tensor<4x8xf32>, %x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %nz = graph.nonzero %mask : (tensor<4xi1>) -> tensor<1x4xi64>
  %token = graph.transpose %nz {perm = array<i64: 1, 0>} : (tensor<1x4xi64>) -> tensor<4x1xi64>
  %rows = graph.gather_nd %x, %token : (tensor<4x8xf32>, tensor<4x1xi64>) -> tensor<4x8xf32>
  %out = graph.linear %rows, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %sum = graph.scatter_nd %acc, %token, %out {reduction = 1 : i32} : (tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %sum : tensor<4x8xf32>
}
