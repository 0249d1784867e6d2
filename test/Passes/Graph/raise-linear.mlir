// RUN: shardc-opt %s --split-input-file --shardc-raise-linear | FileCheck %s

// CHECK-LABEL: func.func @matmul_add
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>)
func.func @matmul_add(%x: tensor<2x16x64xf32>) -> tensor<2x16x32xf32> {
  // CHECK-DAG: %[[W:.*]] = graph.weight "w"
  // CHECK-DAG: %[[B:.*]] = graph.weight "b"
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 8192} : tensor<64x32xf32>
  %b = graph.weight "b" {file = "m.onnx", offset = 8192, size = 128} : tensor<32xf32>
  %0 = graph.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  %1 = graph.add %b, %0 : (tensor<32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  // CHECK: %[[L:.*]] = graph.linear %[[X]], %[[W]], %[[B]] : (tensor<2x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  // CHECK-NOT: graph.matmul
  // CHECK: return %[[L]]
  return %1 : tensor<2x16x32xf32>
}

// -----

// nn.Linear / Gemm(transB=1): the weight is [out, in] behind a transpose.
// CHECK-LABEL: func.func @transposed
func.func @transposed(%x: tensor<4x64xf32>) -> tensor<4x32xf32> {
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 8192} : tensor<32x64xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %0 = graph.matmul %x, %t : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  // CHECK: graph.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<4x64xf32>, tensor<32x64xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// Products of two activations (attention scores) are not linear layers, and a
// bias that broadcasts over more than the features stays an add.
// CHECK-LABEL: func.func @not_linear
func.func @not_linear(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>, %x: tensor<4x64xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: graph.matmul
  %0 = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 2048} : tensor<64x8xf32>
  %bias = graph.weight "b" {file = "m.onnx", offset = 2048, size = 128} : tensor<4x8xf32>
  %1 = graph.matmul %x, %w : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %2 = graph.add %1, %bias : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[L:.*]] = graph.linear %{{.*}}, %{{.*}} : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.add %[[L]]
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Hugging Face's Conv1D (GPT-2): x.view(-1, in), addmm exported as
// matmul + add, then .view(..., out). The linear is raised on the 3-D input
// and the merged [B*S, N] value disappears, so the gelu sits between two
// linears (the MLP pattern) and batch and sequence stay apart.
// CHECK-LABEL: func.func @conv1d_mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
func.func @conv1d_mlp(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = graph.constant dense<0.5> : tensor<8x32xf32>
  %b1 = graph.constant dense<0.25> : tensor<32xf32>
  %w2 = graph.constant dense<0.125> : tensor<32x8xf32>
  %b2 = graph.constant dense<0.75> : tensor<8xf32>
  %x2 = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.matmul %x2, %w1 : (tensor<8x8xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %hb = graph.add %b1, %h2 : (tensor<32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %h3 = graph.reshape %hb : (tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %g = graph.gelu %h3 {approximate_tanh = true} : tensor<2x4x32xf32>
  %g2 = graph.reshape %g : (tensor<2x4x32xf32>) -> tensor<8x32xf32>
  %o2 = graph.matmul %g2, %w2 : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  %ob = graph.add %b2, %o2 : (tensor<8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %o3 = graph.reshape %ob : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[H:.*]] = graph.linear %[[X]], %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
  // CHECK: %[[G:.*]] = graph.gelu %[[H]]
  // CHECK: %[[O:.*]] = graph.linear %[[G]], %{{.*}}, %{{.*}} : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: return %[[O]]
  return %o3 : tensor<2x4x8xf32>
}

// -----

// A linear on flattened tokens whose result is used as it is (MoE dispatch)
// stays on the merged input.
// CHECK-LABEL: func.func @flattened_tokens_kept
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
func.func @flattened_tokens_kept(%x: tensor<2x4x8xf32>) -> tensor<8x16xf32> {
  %w = graph.constant dense<0.5> : tensor<8x16xf32>
  %x2 = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %h = graph.matmul %x2, %w : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = graph.relu %h : tensor<8x16xf32>
  // CHECK: %[[M:.*]] = graph.reshape %[[X]] : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  // CHECK: %[[H:.*]] = graph.linear %[[M]], %{{.*}} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: graph.relu %[[H]]
  return %r : tensor<8x16xf32>
}

// -----

// GPT-2's attention output: [B, S, H, D] merged to [B*S, H*D] for Conv1D. The
// linear reads [B, S, H*D], so batch and sequence stay apart.
// CHECK-LABEL: func.func @conv1d_heads_merged
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x2x4xf32>)
func.func @conv1d_heads_merged(%x: tensor<2x4x2x4xf32>) -> tensor<2x4x8xf32> {
  %w = graph.constant dense<0.5> : tensor<8x8xf32>
  %x2 = graph.reshape %x : (tensor<2x4x2x4xf32>) -> tensor<8x8xf32>
  %h = graph.matmul %x2, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = graph.reshape %h : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[M:.*]] = graph.reshape %[[X]] : (tensor<2x4x2x4xf32>) -> tensor<2x4x8xf32>
  // CHECK: %[[H:.*]] = graph.linear %[[M]], %{{.*}} : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  // CHECK-NEXT: return %[[H]]
  return %o : tensor<2x4x8xf32>
}

// -----

// OPT flattens tokens for its final norm and MLP, adds the residual on
// [B*S, H] and views the sum back: the whole per-token region runs on
// [B, S, H] instead, the norm's axis moved with the added dim.
// CHECK-LABEL: func.func @opt_flattened_mlp
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK: %[[N:.*]] = graph.layer_norm %[[X]], %{{.*}}, %{{.*}} {axis = 2 : i64, {{.*}}} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[H:.*]] = graph.linear %[[N]], %{{.*}} : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
// CHECK: %[[R:.*]] = graph.relu %[[H]] : tensor<2x4x16xf32>
// CHECK: %[[O:.*]] = graph.linear %[[R]], %{{.*}} : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[S:.*]] = graph.add %[[X]], %[[O]] : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[S]]
func.func @opt_flattened_mlp(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %g = graph.constant dense<1.5> : tensor<8xf32>
  %b = graph.constant dense<0.5> : tensor<8xf32>
  %w1 = graph.constant dense<0.25> : tensor<8x16xf32>
  %w2 = graph.constant dense<0.125> : tensor<16x8xf32>
  %f = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %n = graph.layer_norm %f, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %h = graph.matmul %n, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = graph.relu %h : tensor<8x16xf32>
  %o = graph.matmul %r, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %s = graph.add %f, %o : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = graph.reshape %s : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A flattened region with an op that mixes tokens (a softmax over them, as
// MoE routing has) is left as it is.
// CHECK-LABEL: func.func @flattened_tokens_mixed
// CHECK: graph.reshape %{{.*}} : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// CHECK: graph.softmax %{{.*}} {axis = 0 : i64} : tensor<8x8xf32>
func.func @flattened_tokens_mixed(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %f = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %r = graph.relu %f : tensor<8x8xf32>
  %p = graph.softmax %r {axis = 0 : i64} : tensor<8x8xf32>
  %y = graph.reshape %p : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
