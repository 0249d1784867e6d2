// RUN: shardc-opt %s --split-input-file --shardc-raise-rotary | FileCheck %s

// Llama's apply_rotary_pos_emb: q * cos + rotate_half(q) * sin.
// CHECK-LABEL: func.func @rotate_half
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x16x8xf32>, %[[COS:.*]]: tensor<1x1x16x8xf32>, %[[SIN:.*]]: tensor<1x1x16x8xf32>)
func.func @rotate_half(%q: tensor<1x4x16x8xf32>, %cos: tensor<1x1x16x8xf32>, %sin: tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %0 = graph.mul %q, %cos : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  %x1 = graph.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 4, 16, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x16x4xf32>
  %x2 = graph.slice %q {starts = array<i64: 0, 0, 0, 4>, ends = array<i64: 1, 4, 16, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x16x4xf32>
  %n = graph.neg %x2 : tensor<1x4x16x4xf32>
  %r = graph.concat %n, %x1 {axis = 3 : i64} : (tensor<1x4x16x4xf32>, tensor<1x4x16x4xf32>) -> tensor<1x4x16x8xf32>
  %1 = graph.mul %r, %sin : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  %2 = graph.add %0, %1 : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  // CHECK: %[[R:.*]] = graph.rotary %[[Q]], %[[COS]], %[[SIN]] : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  // CHECK: return %[[R]]
  return %2 : tensor<1x4x16x8xf32>
}

// -----

// The halves swapped the other way round (cat(x1, -x2)) is not rotate_half.
// CHECK-LABEL: func.func @wrong_halves
func.func @wrong_halves(%q: tensor<1x4x16x8xf32>, %cos: tensor<1x1x16x8xf32>, %sin: tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %0 = graph.mul %q, %cos : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  %x1 = graph.slice %q {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 1, 4, 16, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x16x4xf32>
  %x2 = graph.slice %q {starts = array<i64: 0, 0, 0, 4>, ends = array<i64: 1, 4, 16, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x16x4xf32>
  %n = graph.neg %x1 : tensor<1x4x16x4xf32>
  %r = graph.concat %n, %x2 {axis = 3 : i64} : (tensor<1x4x16x4xf32>, tensor<1x4x16x4xf32>) -> tensor<1x4x16x8xf32>
  %1 = graph.mul %r, %sin : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  %2 = graph.add %0, %1 : (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32>
  // CHECK-NOT: graph.rotary
  return %2 : tensor<1x4x16x8xf32>
}
