// RUN: shardc-opt %s --split-input-file --shardc-raise-mlp | FileCheck %s

// linear -> gelu -> linear (GPT-2, BERT).
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[W1:.*]]: tensor<64x256xf32>, %[[B1:.*]]: tensor<256xf32>, %[[W2:.*]]: tensor<256x64xf32>)
func.func @mlp(%x: tensor<16x64xf32>, %w1: tensor<64x256xf32>, %b1: tensor<256xf32>, %w2: tensor<256x64xf32>) -> tensor<16x64xf32> {
  %0 = graph.linear %x, %w1, %b1 : (tensor<16x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<16x256xf32>
  %1 = graph.gelu %0 : tensor<16x256xf32>
  %2 = graph.linear %1, %w2 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  // CHECK: %[[M:.*]] = graph.composite "mlp"(%[[X]], %[[W1]], %[[B1]], %[[W2]]) : (tensor<16x64xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32> {
  // CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<16x64xf32>, %[[A1:.*]]: tensor<64x256xf32>, %[[A2:.*]]: tensor<256xf32>, %[[A3:.*]]: tensor<256x64xf32>):
  // CHECK-NEXT: %[[H:.*]] = graph.linear %[[A0]], %[[A1]], %[[A2]]
  // CHECK-NEXT: %[[G:.*]] = graph.gelu %[[H]]
  // CHECK-NEXT: %[[O:.*]] = graph.linear %[[G]], %[[A3]]
  // CHECK-NEXT: graph.yield %[[O]] : tensor<16x64xf32>
  // CHECK: return %[[M]]
  return %2 : tensor<16x64xf32>
}

// -----

// Llama's SwiGLU: down(silu(gate(x)) * up(x)).
// CHECK-LABEL: func.func @swiglu
func.func @swiglu(%x: tensor<16x64xf32>, %wg: tensor<64x128xf32>, %wu: tensor<64x128xf32>, %wd: tensor<128x64xf32>) -> tensor<16x64xf32> {
  %g = graph.linear %x, %wg : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %u = graph.linear %x, %wu : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
  %a = graph.silu %g : tensor<16x128xf32>
  %h = graph.mul %u, %a : (tensor<16x128xf32>, tensor<16x128xf32>) -> tensor<16x128xf32>
  %d = graph.linear %h, %wd : (tensor<16x128xf32>, tensor<128x64xf32>) -> tensor<16x64xf32>
  // CHECK: graph.composite "mlp"
  // CHECK: graph.silu
  // CHECK: graph.mul
  // CHECK: graph.yield
  // CHECK-NOT: graph.linear
  // CHECK: return
  return %d : tensor<16x64xf32>
}

// -----

// The hidden activation is also returned: grouping it would hide a value.
// CHECK-LABEL: func.func @escaping_hidden
func.func @escaping_hidden(%x: tensor<16x64xf32>, %w1: tensor<64x256xf32>, %w2: tensor<256x64xf32>) -> (tensor<16x64xf32>, tensor<16x256xf32>) {
  %0 = graph.linear %x, %w1 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
  %1 = graph.relu %0 : tensor<16x256xf32>
  %2 = graph.linear %1, %w2 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
  // CHECK-NOT: graph.composite
  return %2, %1 : tensor<16x64xf32>, tensor<16x256xf32>
}
