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

// -----

// torch's MultiheadAttention: a sequence-major projection [S, B, H*D] reshaped
// to [S, B*H, D] and transposed to [B*H, S, D]; keys transposed twice; the
// result transposed back and merged. Raising unfolds the heads: the attention
// op and every op around it hold [B, H, S, D] or [S, B, H, D], never B*H.
// CHECK-LABEL: func.func @heads_folded_sequence_major
// CHECK-SAME: (%[[Q:.*]]: tensor<6x2x32xf32>, %[[K:.*]]: tensor<6x2x32xf32>, %[[V:.*]]: tensor<6x2x32xf32>)
func.func @heads_folded_sequence_major(%q: tensor<6x2x32xf32>, %k: tensor<6x2x32xf32>, %v: tensor<6x2x32xf32>) -> tensor<12x32xf32> {
  %q1 = graph.reshape %q : (tensor<6x2x32xf32>) -> tensor<6x8x8xf32>
  %q2 = graph.transpose %q1 {perm = array<i64: 1, 0, 2>} : (tensor<6x8x8xf32>) -> tensor<8x6x8xf32>
  %k1 = graph.reshape %k : (tensor<6x2x32xf32>) -> tensor<6x8x8xf32>
  %kT = graph.transpose %k1 {perm = array<i64: 1, 2, 0>} : (tensor<6x8x8xf32>) -> tensor<8x8x6xf32>
  %v1 = graph.reshape %v : (tensor<6x2x32xf32>) -> tensor<6x8x8xf32>
  %v2 = graph.transpose %v1 {perm = array<i64: 1, 0, 2>} : (tensor<6x8x8xf32>) -> tensor<8x6x8xf32>
  %c = graph.constant dense<0.35355339> : tensor<f32>
  %qs = graph.mul %q2, %c : (tensor<8x6x8xf32>, tensor<f32>) -> tensor<8x6x8xf32>
  %s = graph.matmul %qs, %kT : (tensor<8x6x8xf32>, tensor<8x8x6xf32>) -> tensor<8x6x6xf32>
  %p = graph.softmax %s {axis = 2 : i64} : tensor<8x6x6xf32>
  %o = graph.matmul %p, %v2 : (tensor<8x6x6xf32>, tensor<8x6x8xf32>) -> tensor<8x6x8xf32>
  %ot = graph.transpose %o {perm = array<i64: 1, 0, 2>} : (tensor<8x6x8xf32>) -> tensor<6x8x8xf32>
  %r = graph.reshape %ot : (tensor<6x8x8xf32>) -> tensor<12x32xf32>
  // CHECK-DAG: %[[Q4:.*]] = graph.reshape %[[Q]] : (tensor<6x2x32xf32>) -> tensor<6x2x4x8xf32>
  // CHECK-DAG: %[[QH:.*]] = graph.transpose %[[Q4]] {perm = array<i64: 1, 2, 0, 3>} : (tensor<6x2x4x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK-DAG: %[[K4:.*]] = graph.reshape %[[K]] : (tensor<6x2x32xf32>) -> tensor<6x2x4x8xf32>
  // CHECK-DAG: %[[KH:.*]] = graph.transpose %[[K4]] {perm = array<i64: 1, 2, 0, 3>} : (tensor<6x2x4x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK-DAG: %[[V4:.*]] = graph.reshape %[[V]] : (tensor<6x2x32xf32>) -> tensor<6x2x4x8xf32>
  // CHECK-DAG: %[[VH:.*]] = graph.transpose %[[V4]] {perm = array<i64: 1, 2, 0, 3>} : (tensor<6x2x4x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[QH]], %[[KH]], %[[VH]] {scale = 0.3535{{[0-9]*}} : f64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK: %[[AT:.*]] = graph.transpose %[[A]] {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x4x6x8xf32>) -> tensor<6x2x4x8xf32>
  // CHECK: %[[R:.*]] = graph.reshape %[[AT]] : (tensor<6x2x4x8xf32>) -> tensor<12x32xf32>
  // CHECK: return %[[R]]
  return %r : tensor<12x32xf32>
}

// -----

// GPT-NeoX (transformers 4.4x): q and k viewed as [B*H, S, D] for baddbmm
// (zeros + alpha * q @ kT), the scores viewed back as [B, H, Sq, Sk], then
// where(causal, scores, min) and an additive padding mask; v stays 4-D.
// With a padding mask a row can have every key hidden (left padding), where
// the exported graph averages the keys: the causal mask stays a mask
// (where(causal, 0, min), the same scores since min absorbs any score)
// instead of the flag, which would drop the hidden keys.
// CHECK-LABEL: func.func @heads_folded_scores_unfolded
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x6x8xf32>, %[[K:.*]]: tensor<2x4x6x8xf32>, %[[V:.*]]: tensor<2x4x6x8xf32>, %[[PAD:.*]]: tensor<2x1x1x6xf32>)
func.func @heads_folded_scores_unfolded(%q: tensor<2x4x6x8xf32>, %k: tensor<2x4x6x8xf32>, %v: tensor<2x4x6x8xf32>, %pad: tensor<2x1x1x6xf32>) -> tensor<2x4x6x8xf32> {
  %q3 = graph.reshape %q : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %k3 = graph.reshape %k : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %kT = graph.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<8x6x8xf32>) -> tensor<8x8x6xf32>
  %mm = graph.matmul %q3, %kT : (tensor<8x6x8xf32>, tensor<8x8x6xf32>) -> tensor<8x6x6xf32>
  %alpha = graph.constant dense<0.35355339> : tensor<f32>
  %sc = graph.mul %mm, %alpha : (tensor<8x6x6xf32>, tensor<f32>) -> tensor<8x6x6xf32>
  %zeros = graph.constant dense<0.0> : tensor<8x6x6xf32>
  %s3 = graph.add %zeros, %sc : (tensor<8x6x6xf32>, tensor<8x6x6xf32>) -> tensor<8x6x6xf32>
  %s4 = graph.reshape %s3 : (tensor<8x6x6xf32>) -> tensor<2x4x6x6xf32>
  %causal = graph.constant dense<[[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]> : tensor<6x6xi1>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %w = graph.where %causal, %s4, %min : (tensor<6x6xi1>, tensor<2x4x6x6xf32>, tensor<f32>) -> tensor<2x4x6x6xf32>
  %m = graph.add %w, %pad : (tensor<2x4x6x6xf32>, tensor<2x1x1x6xf32>) -> tensor<2x4x6x6xf32>
  %p = graph.softmax %m {axis = 3 : i64} : tensor<2x4x6x6xf32>
  %o = graph.matmul %p, %v : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[MIN:.*]] = graph.constant dense<-3.40282347E+38> : tensor<f32>
  // CHECK: %[[C:.*]] = graph.where %{{.*}}, %[[ZERO]], %[[MIN]] : (tensor<6x6xi1>, tensor<f32>, tensor<f32>) -> tensor<6x6xf32>
  // CHECK: %[[M:.*]] = graph.add %[[PAD]], %[[C]] : (tensor<2x1x1x6xf32>, tensor<6x6xf32>) -> tensor<2x1x6x6xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 0.3535{{[0-9]*}} : f64} : (tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x4x6x8xf32>, tensor<2x1x6x6xf32>) -> tensor<2x4x6x8xf32>
  // CHECK: return %[[A]]
  return %o : tensor<2x4x6x8xf32>
}

// -----

// DistilBERT: q divided by sqrt(d) before the matmul, then masked_fill's
// spelling where(hide, min, scores): the mask hides its true positions, with
// a finite fill, so it becomes the additive where(keep, 0, min).
// CHECK-LABEL: func.func @masked_fill_hides
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x6x8xf32>, %[[KT:.*]]: tensor<2x4x8x6xf32>, %[[V:.*]]: tensor<2x4x6x8xf32>, %[[HIDE:.*]]: tensor<2x1x1x6xi1>)
func.func @masked_fill_hides(%q: tensor<2x4x6x8xf32>, %kt: tensor<2x4x8x6xf32>, %v: tensor<2x4x6x8xf32>, %hide: tensor<2x1x1x6xi1>) -> tensor<2x4x6x8xf32> {
  %d = graph.constant dense<2.82842712> : tensor<f32>
  %qs = graph.div %q, %d : (tensor<2x4x6x8xf32>, tensor<f32>) -> tensor<2x4x6x8xf32>
  %s = graph.matmul %qs, %kt : (tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x6x6xf32>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %w = graph.where %hide, %min, %s : (tensor<2x1x1x6xi1>, tensor<f32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %p = graph.softmax %w {axis = 3 : i64} : tensor<2x4x6x6xf32>
  %o = graph.matmul %p, %v : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK: %[[KEEP:.*]] = graph.not %[[HIDE]] : tensor<2x1x1x6xi1>
  // CHECK: %[[M:.*]] = graph.where %[[KEEP]], %{{.*}}, %{{.*}} : (tensor<2x1x1x6xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x1x6xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %{{.*}}, %[[V]], %[[M]] {scale = 0.3535{{[0-9]*}} : f64}
  // CHECK: return %[[A]]
  return %o : tensor<2x4x6x8xf32>
}

// -----

// torch 2.x's dynamo exporter spells SDPA with sqrt(scale) on q and on k^T,
// k^T formed with batch and heads merged ([B*H, S, D] transposed, then
// viewed back), a boolean mask turned into where(keep, 0, min) and added,
// and the guard where(isnan(p), 0, p) between the softmax and p @ v.
// CHECK-LABEL: func.func @dynamo_sdpa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x6x8xf32>, %[[K:.*]]: tensor<2x4x6x8xf32>, %[[V:.*]]: tensor<2x4x6x8xf32>, %[[KEEP:.*]]: tensor<2x1x6x6xi1>)
func.func @dynamo_sdpa(%q: tensor<2x4x6x8xf32>, %k: tensor<2x4x6x8xf32>, %v: tensor<2x4x6x8xf32>, %keep: tensor<2x1x6x6xi1>) -> tensor<2x4x6x8xf32> {
  %k3 = graph.reshape %k : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %kt3 = graph.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<8x6x8xf32>) -> tensor<8x8x6xf32>
  %kt = graph.reshape %kt3 : (tensor<8x8x6xf32>) -> tensor<2x4x8x6xf32>
  %c = graph.constant dense<0.594603577> : tensor<f32>
  %qs = graph.mul %q, %c : (tensor<2x4x6x8xf32>, tensor<f32>) -> tensor<2x4x6x8xf32>
  %ks = graph.mul %kt, %c : (tensor<2x4x8x6xf32>, tensor<f32>) -> tensor<2x4x8x6xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %bias = graph.where %keep, %zero, %min : (tensor<2x1x6x6xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x6x6xf32>
  %s = graph.matmul %qs, %ks : (tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32>) -> tensor<2x4x6x6xf32>
  %m = graph.add %s, %bias : (tensor<2x4x6x6xf32>, tensor<2x1x6x6xf32>) -> tensor<2x4x6x6xf32>
  %p = graph.softmax %m {axis = 3 : i64} : tensor<2x4x6x6xf32>
  %nan = graph.is_nan %p : (tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xi1>
  %g = graph.where %nan, %zero, %p : (tensor<2x4x6x6xi1>, tensor<f32>, tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
  %o = graph.matmul %g, %v : (tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32>) -> tensor<2x4x6x8xf32>
  // CHECK: %[[B:.*]] = graph.where %[[KEEP]]
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]], %[[B]] {scale = 0.3535{{[0-9]*}} : f64}
  // CHECK-NEXT: return %[[A]]
  return %o : tensor<2x4x6x8xf32>
}

// -----

// A where() that replaces NaNs by something other than 0 is not the SDPA
// guard: the softmax stays as it is.
// CHECK-LABEL: func.func @nan_to_one_is_no_guard
func.func @nan_to_one_is_no_guard(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %nan = graph.is_nan %p : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xi1>
  %g = graph.where %nan, %one, %p : (tensor<1x2x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %o = graph.matmul %g, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // CHECK-NOT: graph.attention
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Grouped-query attention in the dynamo spelling: repeat_kv's expanded
// [B, Hkv, n, S, D] keys merged straight to [B*H, S, D] for k^T. The keys are
// recognized before the repetition (2 kv heads for 4 query heads).
// CHECK-LABEL: func.func @dynamo_gqa_keys
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x6x8xf32>, %[[K:.*]]: tensor<1x2x6x8xf32>, %[[V:.*]]: tensor<1x2x6x8xf32>)
func.func @dynamo_gqa_keys(%q: tensor<1x4x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32> {
  %k1 = graph.reshape %k : (tensor<1x2x6x8xf32>) -> tensor<1x2x1x6x8xf32>
  %ke = graph.expand %k1 : (tensor<1x2x1x6x8xf32>) -> tensor<1x2x2x6x8xf32>
  %k3 = graph.reshape %ke : (tensor<1x2x2x6x8xf32>) -> tensor<4x6x8xf32>
  %kt3 = graph.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<4x6x8xf32>) -> tensor<4x8x6xf32>
  %kt = graph.reshape %kt3 : (tensor<4x8x6xf32>) -> tensor<1x4x8x6xf32>
  %v1 = graph.reshape %v : (tensor<1x2x6x8xf32>) -> tensor<1x2x1x6x8xf32>
  %ve = graph.expand %v1 : (tensor<1x2x1x6x8xf32>) -> tensor<1x2x2x6x8xf32>
  %vr = graph.reshape %ve : (tensor<1x2x2x6x8xf32>) -> tensor<1x4x6x8xf32>
  %s = graph.matmul %q, %kt : (tensor<1x4x6x8xf32>, tensor<1x4x8x6xf32>) -> tensor<1x4x6x6xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x4x6x6xf32>
  %o = graph.matmul %p, %vr : (tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f64} : (tensor<1x4x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x6x8xf32>
  // CHECK-NEXT: return %[[A]]
  return %o : tensor<1x4x6x8xf32>
}

// -----

// Bloom: baddbmm(alibi, q, k^T) on [B*H] with the ALiBi bias [B*H, 1, Sk]
// added there, viewed as [B, H, Sq, Sk] for the padding mask and the softmax,
// and the probabilities viewed back as [B*H, Sq, Sk] for a 3-D bmm with v.
// The bias becomes part of the mask, viewed as [B, H, 1, Sk].
// CHECK-LABEL: func.func @bloom_alibi
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x6x8xf32>, %[[K:.*]]: tensor<2x4x6x8xf32>, %[[V:.*]]: tensor<2x4x6x8xf32>, %[[ALIBI:.*]]: tensor<8x1x6xf32>, %[[PAD:.*]]: tensor<2x1x6x6xf32>)
func.func @bloom_alibi(%q: tensor<2x4x6x8xf32>, %k: tensor<2x4x6x8xf32>, %v: tensor<2x4x6x8xf32>, %alibi: tensor<8x1x6xf32>, %pad: tensor<2x1x6x6xf32>) -> tensor<8x6x8xf32> {
  %q3 = graph.reshape %q : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %k3 = graph.reshape %k : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %v3 = graph.reshape %v : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  %kt = graph.transpose %k3 {perm = array<i64: 0, 2, 1>} : (tensor<8x6x8xf32>) -> tensor<8x8x6xf32>
  %mm = graph.matmul %q3, %kt : (tensor<8x6x8xf32>, tensor<8x8x6xf32>) -> tensor<8x6x6xf32>
  %alpha = graph.constant dense<0.35355339> : tensor<f32>
  %sc = graph.mul %mm, %alpha : (tensor<8x6x6xf32>, tensor<f32>) -> tensor<8x6x6xf32>
  %s3 = graph.add %sc, %alibi : (tensor<8x6x6xf32>, tensor<8x1x6xf32>) -> tensor<8x6x6xf32>
  %s4 = graph.reshape %s3 : (tensor<8x6x6xf32>) -> tensor<2x4x6x6xf32>
  %m = graph.add %s4, %pad : (tensor<2x4x6x6xf32>, tensor<2x1x6x6xf32>) -> tensor<2x4x6x6xf32>
  %p = graph.softmax %m {axis = 3 : i64} : tensor<2x4x6x6xf32>
  %p3 = graph.reshape %p : (tensor<2x4x6x6xf32>) -> tensor<8x6x6xf32>
  %o = graph.matmul %p3, %v3 : (tensor<8x6x6xf32>, tensor<8x6x8xf32>) -> tensor<8x6x8xf32>
  // CHECK: %[[B4:.*]] = graph.reshape %[[ALIBI]] : (tensor<8x1x6xf32>) -> tensor<2x4x1x6xf32>
  // CHECK: %[[M:.*]] = graph.add %[[PAD]], %[[B4]] : (tensor<2x1x6x6xf32>, tensor<2x4x1x6xf32>) -> tensor<2x4x6x6xf32>
  // CHECK: %[[A:.*]] = graph.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 0.3535{{[0-9]*}} : f64}
  // CHECK: %[[R:.*]] = graph.reshape %[[A]] : (tensor<2x4x6x8xf32>) -> tensor<8x6x8xf32>
  // CHECK: return %[[R]]
  return %o : tensor<8x6x8xf32>
}
