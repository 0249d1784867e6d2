// RUN: shardc-opt %s --split-input-file --shardc-test-sharding-rules | FileCheck %s

// A linear layer: rows parallel, the contraction k a reduction that leaves
// partial sums, the bias a partial sum when k is split.
// CHECK-LABEL: func.func @linear
// CHECK: graph.linear {{.*}}dist.rule = "([a, b, c], [c, d], [d]) -> ([a, b, d]) {a=2, b=16, c=64 reduction, d=128} operand 2 partial over c"
func.func @linear(%x: tensor<2x16x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<2x16x128xf32> {
  %0 = graph.linear %x, %w, %b : (tensor<2x16x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<2x16x128xf32>
  return %0 : tensor<2x16x128xf32>
}

// -----

// A transposed weight [n, k] maps the same factors the other way round.
// CHECK-LABEL: func.func @linear_transposed
// CHECK: dist.rule = "([a, b], [c, b]) -> ([a, c]) {a=8, b=64 reduction, c=32}"
func.func @linear_transposed(%x: tensor<8x64xf32>, %w: tensor<32x64xf32>) -> tensor<8x32xf32> {
  %0 = graph.linear %x, %w {transpose_weight = true} : (tensor<8x64xf32>, tensor<32x64xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// Batched matmul with a broadcast batch dim: size-1 dims have no factor.
// CHECK-LABEL: func.func @matmul
// CHECK: dist.rule = "([a, b, c, e], [1, b, e, d]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=8, e=32 reduction}"
func.func @matmul(%a: tensor<2x4x16x32xf32>, %b: tensor<1x4x32x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x4x16x32xf32>, tensor<1x4x32x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

// Heads travel through reshape and transpose: [b, s, h*d] -> [b, s, h, d]
// maps dim 2 to the compound factors h (major) and d.
// CHECK-LABEL: func.func @split_heads
// CHECK: graph.reshape {{.*}}dist.rule = "([a, b, c*d]) -> ([a, b, c, d]) {a=2, b=16, c=4, d=16} linear in operand 0"
// CHECK: graph.transpose {{.*}}dist.rule = "([a, c, b, d]) -> ([a, b, c, d]) {a=2, b=4, c=16, d=16} linear in operand 0"
func.func @split_heads(%x: tensor<2x16x64xf32>) -> tensor<2x4x16x16xf32> {
  %0 = graph.reshape %x : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
  %1 = graph.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
  return %1 : tensor<2x4x16x16xf32>
}

// -----

// Refinement across dims: [2, 64] -> [8, 16] is 2 * (4 * 16) = (2 * 4) * 16.
// CHECK-LABEL: func.func @reshape_refine
// CHECK: dist.rule = "([a, b*c]) -> ([a*b, c]) {a=2, b=4, c=16} linear in operand 0"
func.func @reshape_refine(%x: tensor<2x64xf32>) -> tensor<8x16xf32> {
  %0 = graph.reshape %x : (tensor<2x64xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Without a common refinement ([6, 4] -> [4, 6]) everything stays whole.
// CHECK-LABEL: func.func @reshape_whole
// CHECK: dist.rule = "([a, b]) -> ([c, d]) {a=6 whole, b=4 whole, c=4 whole, d=6 whole} linear in operand 0"
func.func @reshape_whole(%x: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// Grouped-query attention: the query's head dim is (kv head, group), so a
// split of kv heads keeps each group together; keys and depth stay whole,
// and so do the queries under a causal mask (masking is by global position).
// CHECK-LABEL: func.func @attention_gqa
// CHECK: dist.rule = "([a, b*c, d, f], [a, b, e, f], [a, b, e, g]) -> ([a, b*c, d, g]) {a=2, b=2, c=2, d=16 whole, e=16 whole, f=8 whole, g=8}"
func.func @attention_gqa(%q: tensor<2x4x16x8xf32>, %k: tensor<2x2x16x8xf32>, %v: tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %0 = graph.attention %q, %k, %v {causal = true, scale = 0.35 : f64} : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

// A padding mask [b, 1, 1, sk] broadcasts over heads and queries.
// CHECK-LABEL: func.func @attention_mask
// CHECK: dist.rule = "([a, b, d, f], [a, b, e, f], [a, b, e, g], [a, 1, 1, e]) -> ([a, b, d, g]) {a=2, b=4, c=1, d=16, e=16 whole, f=8 whole, g=8}"
func.func @attention_mask(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %m: tensor<2x1x1x16xf32>) -> tensor<2x4x16x8xf32> {
  %0 = graph.attention %q, %k, %v, %m {scale = 0.35 : f64} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x1x1x16xf32>) -> tensor<2x4x16x8xf32>
  return %0 : tensor<2x4x16x8xf32>
}

// -----

// Norms see the normalized dims whole; softmax its axis; gather its axis
// (an embedding table's rows), while the indices' dims are parallel.
// CHECK-LABEL: func.func @whole_dims
// CHECK: graph.layer_norm {{.*}}dist.rule = "([a, b, c], [c], [c]) -> ([a, b, c]) {a=2, b=16, c=64 whole}"
// CHECK: graph.softmax {{.*}}dist.rule = "([a, b, c]) -> ([a, b, c]) {a=2, b=16, c=64 whole}"
// CHECK: graph.gather {{.*}}dist.rule = "([d, c], [a, b]) -> ([a, b, c]) {a=2, b=16, c=64, d=100 whole} linear in operand 0"
func.func @whole_dims(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %table: tensor<100x64xf32>, %ids: tensor<2x16xi64>) -> (tensor<2x16x64xf32>, tensor<2x16x64xf32>) {
  %0 = graph.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %1 = graph.softmax %0 {axis = 2 : i64} : tensor<2x16x64xf32>
  %2 = graph.gather %table, %ids {axis = 0 : i64} : (tensor<100x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
  return %1, %2 : tensor<2x16x64xf32>, tensor<2x16x64xf32>
}

// -----

// Elementwise ops broadcast from the right; add is linear in both operands
// (partial sums pass); a sum over an axis leaves one, a max does not.
// CHECK-LABEL: func.func @elementwise_reduce
// CHECK: graph.add {{.*}}dist.rule = "([a, b], [b]) -> ([a, b]) {a=8, b=32} linear in operand 0, 1"
// CHECK: graph.reduce_sum {{.*}}dist.rule = "([a, b]) -> ([a]) {a=8, b=32 reduction} linear in operand 0"
// CHECK: graph.reduce_max {{.*}}dist.rule = "([a, b]) -> ([a, 1]) {a=8, b=32 whole}"
func.func @elementwise_reduce(%x: tensor<8x32xf32>, %y: tensor<32xf32>) -> (tensor<8xf32>, tensor<8x1xf32>) {
  %0 = graph.add %x, %y : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 1>, keepdims = false} : (tensor<8x32xf32>) -> tensor<8xf32>
  %2 = graph.reduce_max %0 {axes = array<i64: 1>, keepdims = true} : (tensor<8x32xf32>) -> tensor<8x1xf32>
  return %1, %2 : tensor<8xf32>, tensor<8x1xf32>
}

// -----

// A slice keeps the dims it cuts whole; a top-k its axis.
// CHECK-LABEL: func.func @slice_topk
// CHECK: graph.slice {{.*}}dist.rule = "([a, b]) -> ([a, c]) {a=8, b=32 whole, c=16 whole} linear in operand 0"
// CHECK: graph.topk {{.*}}dist.rule = "([a, c]) -> ([a, b], [a, b]) {a=8, b=2 whole, c=16 whole}"
func.func @slice_topk(%x: tensor<8x32xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>) {
  %0 = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 8, 16>, steps = array<i64: 1, 1>} : (tensor<8x32xf32>) -> tensor<8x16xf32>
  %values, %indices = graph.topk %0 {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<8x16xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>)
  return %values, %indices : tensor<8x2xf32>, tensor<8x2xi64>
}

// -----

// The ops a partial sum may pass (linear in those operands, the others whole
// on every device): a scale broadcast against the value (routing weights),
// a select against zeros, an add of zeros (an accumulator's start), moves
// and sums of elements, a scatter (into zeros: the updates alone). Not: a
// product of two full-shaped values (which one is scaled is ambiguous), a
// multiplying scatter, a max.
// CHECK-LABEL: func.func @linear_operands
// CHECK: graph.mul {{.*}}dist.rule = "([a, b], [a, 1]) -> ([a, b]) {a=6, b=4} linear in operand 0"
// CHECK: graph.mul {{.*}}dist.rule = "([a, 1], [a, b]) -> ([a, b]) {a=6, b=4} linear in operand 1"
// CHECK: graph.mul {{.*}}dist.rule = "([a, b], [a, b]) -> ([a, b]) {a=6, b=4}"
// CHECK: graph.div {{.*}}dist.rule = "([a, b], [a, 1]) -> ([a, b]) {a=6, b=4} linear in operand 0"
// CHECK: graph.where {{.*}}dist.rule = "([a, 1], [a, b], []) -> ([a, b]) {a=6, b=4} linear in operand 1"
// CHECK: graph.where {{.*}}dist.rule = "([a, 1], [], [a, b]) -> ([a, b]) {a=6, b=4} linear in operand 2"
// CHECK: graph.where {{.*}}dist.rule = "([a, 1], [a, b], [a, b]) -> ([a, b]) {a=6, b=4}"
// CHECK: graph.add {{.*}}dist.rule = "([], [a, b]) -> ([a, b]) {a=6, b=4} linear in operand 1"
// CHECK: graph.reshape {{.*}} linear in operand 0"
// CHECK: graph.concat {{.*}} linear in operand 0, 1"
// CHECK: graph.reduce_max
// CHECK-NOT: linear in
// CHECK-SAME: {a=6, b=4 whole}"
// CHECK: graph.scatter_elements {{.*}} linear in operand 2"
// CHECK: graph.scatter_elements {{.*}} linear in operand 0, 2"
// CHECK: graph.scatter_elements
// CHECK-NOT: linear in
// CHECK-SAME: : (
func.func @linear_operands(%x: tensor<6x4xf32>, %s: tensor<6x1xf32>, %c: tensor<6x1xi1>, %idx: tensor<6x4xi64>, %acc: tensor<3x4xf32>) {
  %zero = graph.constant dense<0.0> : tensor<f32>
  %zeros = graph.constant dense<0.0> : tensor<3x4xf32>
  %0 = graph.mul %x, %s : (tensor<6x4xf32>, tensor<6x1xf32>) -> tensor<6x4xf32>
  %1 = graph.mul %s, %x : (tensor<6x1xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %2 = graph.mul %x, %x : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %3 = graph.div %x, %s : (tensor<6x4xf32>, tensor<6x1xf32>) -> tensor<6x4xf32>
  %4 = graph.where %c, %x, %zero : (tensor<6x1xi1>, tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>
  %5 = graph.where %c, %zero, %x : (tensor<6x1xi1>, tensor<f32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %6 = graph.where %c, %x, %0 : (tensor<6x1xi1>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %7 = graph.add %zero, %x : (tensor<f32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %8 = graph.reshape %x : (tensor<6x4xf32>) -> tensor<24xf32>
  %9 = graph.concat %x, %0 {axis = 0 : i64} : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<12x4xf32>
  %10 = graph.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<6x4xf32>) -> tensor<6xf32>
  %11 = graph.scatter_elements %zeros, %idx, %x {axis = 0 : i64, reduction = 0 : i32} : (tensor<3x4xf32>, tensor<6x4xi64>, tensor<6x4xf32>) -> tensor<3x4xf32>
  %12 = graph.scatter_elements %acc, %idx, %x {axis = 0 : i64, reduction = 1 : i32} : (tensor<3x4xf32>, tensor<6x4xi64>, tensor<6x4xf32>) -> tensor<3x4xf32>
  %13 = graph.scatter_elements %acc, %idx, %x {axis = 0 : i64, reduction = 2 : i32} : (tensor<3x4xf32>, tensor<6x4xi64>, tensor<6x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Routed experts: the tokens parallel (a), the experts (b) and each
// expert's width (c) summed over, and the tokens routed to the experts (an
// axis may split both, the op exchanging entries over it).
// CHECK-LABEL: func.func @moe
// CHECK: dist.rule = "([a, d], [a, e], [a, f], [b, g, c], [b, h, c], [b, c, i]) -> ([a, j]) {a=32, b=8 reduction, c=128 reduction, d=64 whole, e=2 whole, f=2 whole, g=64 whole, h=64 whole, i=64 whole, j=64 whole} routes a to b"
func.func @moe(%x: tensor<32x64xf32>, %i: tensor<32x2xi64>, %g: tensor<32x2xf32>, %gate: tensor<8x64x128xf32>, %up: tensor<8x64x128xf32>, %down: tensor<8x128x64xf32>) -> tensor<32x64xf32> {
  %0 = graph.moe %x, %i, %g, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu"} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}
