// RUN: shardc-opt %s --split-input-file --canonicalize | FileCheck %s
// Folding turns ONNX's shape arithmetic into constants and drops identities.

// Shape -> Gather -> Unsqueeze -> Concat, as torch exports the target shape of
// a head split, once the shape is a constant.
// CHECK-LABEL: func.func @shape_chain
func.func @shape_chain() -> tensor<4xi64> {
  %shape = graph.constant dense<[2, 16, 64]> : tensor<3xi64>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %b = graph.gather %shape, %zero {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %s = graph.gather %shape, %one {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = graph.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %s1 = graph.reshape %s : (tensor<i64>) -> tensor<1xi64>
  %heads = graph.constant dense<[4, 16]> : tensor<2xi64>
  %new = graph.concat %b1, %s1, %heads {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  // CHECK: %[[C:.*]] = graph.constant dense<[2, 16, 4, 16]> : tensor<4xi64>
  // CHECK-NOT: graph.gather
  // CHECK-NOT: graph.concat
  // CHECK: return %[[C]]
  return %new : tensor<4xi64>
}

// -----

// A causal mask from Trilu, compared and selected, folds to one constant.
// CHECK-LABEL: func.func @causal_mask
func.func @causal_mask() -> tensor<3x3xf32> {
  %ones = graph.constant dense<1.0> : tensor<3x3xf32>
  %lower = graph.trilu %ones {k = 0 : i64, upper = false} : tensor<3x3xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %keep = graph.compare gt, %lower, %zero : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xi1>
  %hidden = graph.constant dense<-1.0e+9> : tensor<f32>
  %mask = graph.where %keep, %zero, %hidden : (tensor<3x3xi1>, tensor<f32>, tensor<f32>) -> tensor<3x3xf32>
  // CHECK: graph.constant dense<{{\[}}[0.000000e+00, -1.000000e+09, -1.000000e+09], [0.000000e+00, 0.000000e+00, -1.000000e+09], [0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<3x3xf32>
  // CHECK-NOT: graph.where
  return %mask : tensor<3x3xf32>
}

// -----

// Scale factors computed from a head size: sqrt, div and cast of constants.
// CHECK-LABEL: func.func @scale
func.func @scale() -> tensor<f32> {
  %d = graph.constant dense<64> : tensor<i64>
  %f = graph.cast %d : tensor<i64> to tensor<f32>
  %r = graph.sqrt %f : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %s = graph.div %one, %r : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK: graph.constant dense<1.250000e-01> : tensor<f32>
  return %s : tensor<f32>
}

// -----

// Identities fold to their input; reshape of reshape becomes one reshape.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.reshape %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.expand %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.cast %2 : tensor<2x3xf32> to tensor<2x3xf32>
  %4 = graph.slice %3 {starts = array<i64: 0, 0>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = graph.concat %4 {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.reshape %5 : (tensor<2x3xf32>) -> tensor<6xf32>
  %7 = graph.reshape %6 : (tensor<6xf32>) -> tensor<3x2xf32>
  // CHECK: %[[R:.*]] = graph.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // CHECK: return %[[X]], %[[R]]
  return %5, %7 : tensor<2x3xf32>, tensor<3x2xf32>
}

// -----

// Integer division truncates toward zero, as ONNX requires.
// CHECK-LABEL: func.func @int_div
func.func @int_div() -> tensor<2xi32> {
  %a = graph.constant dense<[7, -7]> : tensor<2xi32>
  %b = graph.constant dense<2> : tensor<i32>
  %q = graph.div %a, %b : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
  // CHECK: graph.constant dense<[3, -3]> : tensor<2xi32>
  return %q : tensor<2xi32>
}

// -----

// Values computed from function arguments are not folded.
// CHECK-LABEL: func.func @not_constant
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant dense<1.0> : tensor<2xf32>
  // CHECK: graph.add
  %0 = graph.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A ScatterND that writes every element at its own place (torch's slice
// assignment of a whole mask, as the TorchScript exporter spells it; -1
// counts from the end) is its updates; one that moves an element, or adds,
// stays.
// CHECK-LABEL: func.func @scatter_identity
// CHECK-SAME: (%[[DATA:.*]]: tensor<2x2xf32>, %[[UPDATES:.*]]: tensor<2x2xf32>)
func.func @scatter_identity(%data: tensor<2x2xf32>, %updates: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %own = graph.constant dense<[[[0, 0], [0, 1]], [[1, 0], [-1, -1]]]> : tensor<2x2x2xi64>
  %moved = graph.constant dense<[[[0, 0], [0, 1]], [[1, 1], [1, 0]]]> : tensor<2x2x2xi64>
  // CHECK-DAG: %[[MOVED:.*]] = graph.scatter_nd %[[DATA]], %{{.*}}, %[[UPDATES]] {reduction = 0 : i32}
  // CHECK-DAG: %[[ADDED:.*]] = graph.scatter_nd %[[DATA]], %{{.*}}, %[[UPDATES]] {reduction = 1 : i32}
  // CHECK: return %[[UPDATES]], %[[MOVED]], %[[ADDED]]
  %a = graph.scatter_nd %data, %own, %updates {reduction = 0 : i32} : (tensor<2x2xf32>, tensor<2x2x2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = graph.scatter_nd %data, %moved, %updates {reduction = 0 : i32} : (tensor<2x2xf32>, tensor<2x2x2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = graph.scatter_nd %data, %own, %updates {reduction = 1 : i32} : (tensor<2x2xf32>, tensor<2x2x2xi64>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a, %b, %c : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
