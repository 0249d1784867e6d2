// RUN: shardc-opt %s --split-input-file --shardc-raise-norms | FileCheck %s

// LayerNorm spelled out as torch exports it before opset 17.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
func.func @layer_norm(%x: tensor<2x4x8xf32>, %gamma: tensor<8xf32>, %beta: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0e-5> : tensor<f32>
  %0 = graph.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %1 = graph.sub %x, %0 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %2 = graph.pow %1, %two : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %4 = graph.add %3, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %5 = graph.sqrt %4 : tensor<2x4x1xf32>
  %6 = graph.div %1, %5 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %7 = graph.mul %6, %gamma : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %8 = graph.add %7, %beta : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[N:.*]] = graph.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99{{[0-9]*}}E-6 : f64}
  // CHECK-NOT: graph.reduce_mean
  // CHECK: return %[[N]]
  return %8 : tensor<2x4x8xf32>
}

// -----

// Llama's RMSNorm: x * rsqrt(mean(x^2) + eps) * w.
// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<8xf32>)
func.func @rms_norm(%x: tensor<2x4x8xf32>, %w: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %eps = graph.constant dense<1.0e-6> : tensor<f32>
  %0 = graph.mul %x, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = graph.reduce_mean %0 {axes = array<i64: 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = graph.add %1, %eps : (tensor<2x4x1xf32>, tensor<f32>) -> tensor<2x4x1xf32>
  %3 = graph.rsqrt %2 : tensor<2x4x1xf32>
  %4 = graph.mul %x, %3 : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %5 = graph.mul %w, %4 : (tensor<8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[N:.*]] = graph.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99{{[0-9]*}}E-7 : f64}
  // CHECK: return %[[N]]
  return %5 : tensor<2x4x8xf32>
}

// -----

// A mean over a leading axis is no norm over trailing features.
// CHECK-LABEL: func.func @not_trailing
func.func @not_trailing(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %eps = graph.constant dense<1.0e-6> : tensor<f32>
  %0 = graph.mul %x, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = graph.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
  %2 = graph.add %1, %eps : (tensor<2x1x8xf32>, tensor<f32>) -> tensor<2x1x8xf32>
  %3 = graph.rsqrt %2 : tensor<2x1x8xf32>
  %4 = graph.mul %x, %3 : (tensor<2x4x8xf32>, tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NOT: graph.rms_norm
  return %4 : tensor<2x4x8xf32>
}
