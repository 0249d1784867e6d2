// RUN: shardc-opt %s --split-input-file --shardc-raise-attention | FileCheck %s

// GPT-2: scores / sqrt(d), a where() on a constant causal mask, softmax, @ v.
// CHECK-LABEL: func.func @gpt2
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
func.func @gpt2(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = graph.constant dense<2.828427> : tensor<f32>
  %scaled = graph.div %s, %d : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %causal = graph.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = graph.where %causal, %scaled, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 0.3535{{[0-9]*}} : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // CHECK-NOT: graph.softmax
  // CHECK: return %[[A]]
  return %o : tensor<1x2x4x8xf32>
}

// -----

// BERT: an additive padding mask computed from an input stays the mask operand.
// CHECK-LABEL: func.func @bert
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x4x8xf32>, %[[K:.*]]: tensor<2x2x4x8xf32>, %[[V:.*]]: tensor<2x2x4x8xf32>, %[[M:.*]]: tensor<2x1x1x4xf32>)
func.func @bert(%q: tensor<2x2x4x8xf32>, %k: tensor<2x2x4x8xf32>, %v: tensor<2x2x4x8xf32>, %mask: tensor<2x1x1x4xf32>) -> tensor<2x2x4x8xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x2x4x8xf32>) -> tensor<2x2x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<2x2x4x8xf32>, tensor<2x2x8x4xf32>) -> tensor<2x2x4x4xf32>
  %d = graph.constant dense<0.353553385> : tensor<f32>
  %scaled = graph.mul %s, %d : (tensor<2x2x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
  %masked = graph.add %scaled, %mask : (tensor<2x2x4x4xf32>, tensor<2x1x1x4xf32>) -> tensor<2x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<2x2x4x4xf32>, tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 0.3535{{[0-9]*}} : f64}
  // CHECK: return %[[A]]
  return %o : tensor<2x2x4x8xf32>
}

// -----

// Llama: grouped-query heads repeated by unsqueeze/expand/reshape (repeat_kv)
// are attended without the repetition; an additive constant causal mask
// becomes the causal flag.
// CHECK-LABEL: func.func @llama_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x4x8xf32>, %[[K:.*]]: tensor<1x2x4x8xf32>, %[[V:.*]]: tensor<1x2x4x8xf32>)
func.func @llama_gqa(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %k1 = graph.reshape %k : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %k2 = graph.expand %k1 : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %k3 = graph.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v1 = graph.reshape %v : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %v2 = graph.expand %v1 : (tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %v3 = graph.reshape %v2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = graph.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x4x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = graph.constant dense<2.828427> : tensor<f32>
  %scaled = graph.div %s, %d : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %causal = graph.constant dense<[[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %masked = graph.add %scaled, %causal : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %o = graph.matmul %p, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 0.3535{{[0-9]*}} : f64} : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  // CHECK: return %[[A]]
  return %o : tensor<1x4x4x8xf32>
}

// -----

// nn.MultiheadAttention (torch 1.13): q scaled before a batched [B*H, S, D]
// matmul, a mask (here an input) added by baddbmm, cross attention with 3
// queries and 5 keys; k arrives already transposed.
// CHECK-LABEL: func.func @mha_cross
// CHECK-SAME: (%[[Q:.*]]: tensor<8x3x16xf32>, %[[KT:.*]]: tensor<8x16x5xf32>, %[[V:.*]]: tensor<8x5x16xf32>, %[[M:.*]]: tensor<3x5xf32>)
func.func @mha_cross(%q: tensor<8x3x16xf32>, %kt: tensor<8x16x5xf32>, %v: tensor<8x5x16xf32>, %mask: tensor<3x5xf32>) -> tensor<8x3x16xf32> {
  %c = graph.constant dense<0.25> : tensor<f32>
  %qs = graph.mul %q, %c : (tensor<8x3x16xf32>, tensor<f32>) -> tensor<8x3x16xf32>
  %s = graph.matmul %qs, %kt : (tensor<8x3x16xf32>, tensor<8x16x5xf32>) -> tensor<8x3x5xf32>
  %masked = graph.add %mask, %s : (tensor<3x5xf32>, tensor<8x3x5xf32>) -> tensor<8x3x5xf32>
  %p = graph.softmax %masked {axis = 2 : i64} : tensor<8x3x5xf32>
  %o = graph.matmul %p, %v : (tensor<8x3x5xf32>, tensor<8x5x16xf32>) -> tensor<8x3x16xf32>
  // CHECK: %[[K:.*]] = graph.transpose %[[KT]] {perm = array<i64: 0, 2, 1>} : (tensor<8x16x5xf32>) -> tensor<8x5x16xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f64}
  // CHECK: return %[[A]]
  return %o : tensor<8x3x16xf32>
}

// -----

// A softmax whose probabilities are used twice is not fused away.
// CHECK-LABEL: func.func @probabilities_escape
func.func @probabilities_escape(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // CHECK-NOT: graph.attention
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
