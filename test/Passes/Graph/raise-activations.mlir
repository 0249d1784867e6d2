// RUN: shardc-opt %s --split-input-file --shardc-raise-activations | FileCheck %s

// Exact GELU as torch exports nn.GELU(): x / sqrt(2) -> erf -> + 1 -> * x -> * 0.5.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
func.func @gelu_erf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = graph.erf %0 : tensor<2x8xf32>
  %2 = graph.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = graph.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = graph.mul %3, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] : tensor<2x8xf32>
  // CHECK-NOT: graph.erf
  // CHECK: return %[[G]]
  return %4 : tensor<2x8xf32>
}

// -----

// GPT-2's NewGELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %three = graph.constant dense<3.0> : tensor<f32>
  %c = graph.constant dense<0.044715> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %half, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = graph.pow %x, %three : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %2 = graph.mul %c, %1 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = graph.add %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = graph.mul %k, %3 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = graph.tanh %4 : tensor<2x8xf32>
  %6 = graph.add %one, %5 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %7 = graph.mul %0, %6 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[G:.*]] = graph.gelu %[[X]] {approximate_tanh = true} : tensor<2x8xf32>
  // CHECK-NOT: graph.tanh
  // CHECK: return %[[G]]
  return %7 : tensor<2x8xf32>
}

// -----

// A near miss stays primitive: the factor is 0.6, not 0.5.
// CHECK-LABEL: func.func @not_gelu
func.func @not_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %factor = graph.constant dense<0.6> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %1 = graph.erf %0 : tensor<2x8xf32>
  %2 = graph.add %1, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %3 = graph.mul %x, %2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %4 = graph.mul %3, %factor : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK-NOT: graph.gelu
  // CHECK: graph.erf
  return %4 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @silu_and_rsqrt
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
func.func @silu_and_rsqrt(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = graph.sigmoid %x : tensor<4xf32>
  %1 = graph.mul %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %2 = graph.sqrt %y : tensor<4xf32>
  %3 = graph.div %one, %2 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[S:.*]] = graph.silu %[[X]] : tensor<4xf32>
  // CHECK: %[[R:.*]] = graph.rsqrt %[[Y]] : tensor<4xf32>
  // CHECK: return %[[S]], %[[R]]
  return %1, %3 : tensor<4xf32>, tensor<4xf32>
}
