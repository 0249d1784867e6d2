// RUN: shardc-opt %s --split-input-file --shardc-raise-moe --shardc-raise-routed-experts | FileCheck %s

// transformers 5's batched_mm experts: each (token, slot) entry's expert
// matrices gathered from the stacked [E, 2F, H] gate/up and [E, H, F] down
// weights by the router's index, batched matmuls, the fused projection split
// into gate and up, and the entry weighted by its gate; the sum over each
// token's slots comes after the block. graph.moe takes the stacked weights
// as they are: gate and up are boxes of the fused weight, "out x in".
// CHECK-LABEL: func.func @batched_mm
// CHECK: %[[DOWN:.*]] = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
// CHECK: %[[TOP:.*]], %[[INDEX:.*]] = graph.topk
// CHECK: %[[X:.*]] = graph.reshape %arg0 : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: %[[GATE:.*]] = graph.weight "gate_up" {box_offsets = array<i64: 0, 0, 0>, file = "w.bin", offset = 0 : i64, size = 3072 : i64, stored_shape = array<i64: 3, 32, 8>} : tensor<3x16x8xf32>
// CHECK-DAG: %[[UP:.*]] = graph.weight "gate_up" {box_offsets = array<i64: 0, 16, 0>, file = "w.bin", offset = 0 : i64, size = 3072 : i64, stored_shape = array<i64: 3, 32, 8>} : tensor<3x16x8xf32>
// CHECK: %[[MOE:.*]] = graph.moe %[[X]], %[[INDEX]], %[[TOP]], experts(%[[GATE]], %[[UP]], %[[DOWN]]) {activation = "silu", experts = 3 : i64, transpose_weights = true}
// CHECK-NEXT: return %[[MOE]]
func.func @batched_mm(%x: tensor<2x2x8xf32>, %wr: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %gate_up = graph.weight "gate_up" {file = "w.bin", offset = 0 : i64, size = 3072 : i64} : tensor<3x32x8xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr {transpose_weight = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %x3 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x1x8xf32>
  %xk = graph.expand %x3 : (tensor<4x1x8xf32>) -> tensor<4x2x8xf32>
  %xcol = graph.reshape %xk : (tensor<4x2x8xf32>) -> tensor<8x8x1xf32>
  %entries = graph.reshape %index : (tensor<4x2xi64>) -> tensor<8x1xi64>
  %w1 = graph.gather_nd %gate_up, %entries : (tensor<3x32x8xf32>, tensor<8x1xi64>) -> tensor<8x32x8xf32>
  %p1 = graph.matmul %w1, %xcol : (tensor<8x32x8xf32>, tensor<8x8x1xf32>) -> tensor<8x32x1xf32>
  %p1r = graph.reshape %p1 : (tensor<8x32x1xf32>) -> tensor<8x32xf32>
  %halves:2 = graph.split %p1r {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %act = graph.silu %halves#0 : tensor<8x16xf32>
  %hidden = graph.mul %act, %halves#1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %w2 = graph.gather_nd %down, %entries : (tensor<3x8x16xf32>, tensor<8x1xi64>) -> tensor<8x8x16xf32>
  %hcol = graph.reshape %hidden : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
  %p2 = graph.matmul %w2, %hcol : (tensor<8x8x16xf32>, tensor<8x16x1xf32>) -> tensor<8x8x1xf32>
  %out = graph.reshape %p2 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
  %gcol = graph.reshape %top : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %weighted = graph.mul %out, %gcol : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %slots = graph.reshape %weighted : (tensor<8x8xf32>) -> tensor<4x2x8xf32>
  %routed = graph.reduce_sum %slots {axes = array<i64: 1>, keepdims = false} : (tensor<4x2x8xf32>) -> tensor<4x8xf32>
  return %routed : tensor<4x8xf32>
}

// -----

// Qwen2-MoE: a shared expert scaled by sigmoid(linear(x)) joins the routed
// sum inside the block; it stays ordinary ops, added to graph.moe's result.
// CHECK-LABEL: func.func @batched_mm_shared_expert
// CHECK: %[[TOP:.*]], %[[INDEX:.*]] = graph.topk
// CHECK: graph.silu
// CHECK: %[[SCALE:.*]] = graph.sigmoid
// CHECK: %[[SHARED:.*]] = graph.mul %[[SCALE]]
// CHECK: %[[MOE:.*]] = graph.moe {{.*}}, %[[INDEX]], %[[TOP]], experts(
// CHECK-NEXT: graph.add %[[SHARED]], %[[MOE]]
func.func @batched_mm_shared_expert(%x: tensor<2x2x8xf32>, %wr: tensor<3x8xf32>, %ws: tensor<1x8xf32>, %wsu: tensor<8x16xf32>, %wsd: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %gate_up = graph.weight "gate_up" {file = "w.bin", offset = 0 : i64, size = 3072 : i64} : tensor<3x32x8xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr {transpose_weight = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %x3 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x1x8xf32>
  %xk = graph.expand %x3 : (tensor<4x1x8xf32>) -> tensor<4x2x8xf32>
  %xcol = graph.reshape %xk : (tensor<4x2x8xf32>) -> tensor<8x8x1xf32>
  %entries = graph.reshape %index : (tensor<4x2xi64>) -> tensor<8x1xi64>
  %w1 = graph.gather_nd %gate_up, %entries : (tensor<3x32x8xf32>, tensor<8x1xi64>) -> tensor<8x32x8xf32>
  %p1 = graph.matmul %w1, %xcol : (tensor<8x32x8xf32>, tensor<8x8x1xf32>) -> tensor<8x32x1xf32>
  %p1r = graph.reshape %p1 : (tensor<8x32x1xf32>) -> tensor<8x32xf32>
  %halves:2 = graph.split %p1r {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %act = graph.silu %halves#0 : tensor<8x16xf32>
  %hidden = graph.mul %act, %halves#1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %w2 = graph.gather_nd %down, %entries : (tensor<3x8x16xf32>, tensor<8x1xi64>) -> tensor<8x8x16xf32>
  %hcol = graph.reshape %hidden : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
  %p2 = graph.matmul %w2, %hcol : (tensor<8x8x16xf32>, tensor<8x16x1xf32>) -> tensor<8x8x1xf32>
  %out = graph.reshape %p2 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
  %gcol = graph.reshape %top : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %weighted = graph.mul %out, %gcol : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %slots = graph.reshape %weighted : (tensor<8x8xf32>) -> tensor<4x2x8xf32>
  %routed = graph.reduce_sum %slots {axes = array<i64: 1>, keepdims = false} : (tensor<4x2x8xf32>) -> tensor<4x8xf32>
  %su = graph.linear %flat, %wsu : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %sa = graph.silu %su : tensor<4x16xf32>
  %sd = graph.linear %sa, %wsd : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %sg = graph.linear %flat, %ws {transpose_weight = true} : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x1xf32>
  %sgs = graph.sigmoid %sg : tensor<4x1xf32>
  %shared = graph.mul %sgs, %sd : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %routed, %shared : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The gates are read slot-major ([k, T] flattened) while the entries are
// token-major: not graph.moe.
// CHECK-LABEL: func.func @gates_in_other_order
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @gates_in_other_order(%x: tensor<2x2x8xf32>, %wr: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %gate_up = graph.weight "gate_up" {file = "w.bin", offset = 0 : i64, size = 3072 : i64} : tensor<3x32x8xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr {transpose_weight = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %x3 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x1x8xf32>
  %xk = graph.expand %x3 : (tensor<4x1x8xf32>) -> tensor<4x2x8xf32>
  %xcol = graph.reshape %xk : (tensor<4x2x8xf32>) -> tensor<8x8x1xf32>
  %entries = graph.reshape %index : (tensor<4x2xi64>) -> tensor<8x1xi64>
  %w1 = graph.gather_nd %gate_up, %entries : (tensor<3x32x8xf32>, tensor<8x1xi64>) -> tensor<8x32x8xf32>
  %p1 = graph.matmul %w1, %xcol : (tensor<8x32x8xf32>, tensor<8x8x1xf32>) -> tensor<8x32x1xf32>
  %p1r = graph.reshape %p1 : (tensor<8x32x1xf32>) -> tensor<8x32xf32>
  %halves:2 = graph.split %p1r {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %act = graph.silu %halves#0 : tensor<8x16xf32>
  %hidden = graph.mul %act, %halves#1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %w2 = graph.gather_nd %down, %entries : (tensor<3x8x16xf32>, tensor<8x1xi64>) -> tensor<8x8x16xf32>
  %hcol = graph.reshape %hidden : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
  %p2 = graph.matmul %w2, %hcol : (tensor<8x8x16xf32>, tensor<8x16x1xf32>) -> tensor<8x8x1xf32>
  %out = graph.reshape %p2 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
  %gt = graph.transpose %top {perm = array<i64: 1, 0>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %gcol = graph.reshape %gt : (tensor<2x4xf32>) -> tensor<8x1xf32>
  %weighted = graph.mul %out, %gcol : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %slots = graph.reshape %weighted : (tensor<8x8xf32>) -> tensor<4x2x8xf32>
  %routed = graph.reduce_sum %slots {axes = array<i64: 1>, keepdims = false} : (tensor<4x2x8xf32>) -> tensor<4x8xf32>
  return %routed : tensor<4x8xf32>
}

// -----

// The entries are summed over the wrong dim (tokens of one slot together):
// not graph.moe.
// CHECK-LABEL: func.func @sum_over_tokens
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @sum_over_tokens(%x: tensor<2x2x8xf32>, %wr: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %gate_up = graph.weight "gate_up" {file = "w.bin", offset = 0 : i64, size = 3072 : i64} : tensor<3x32x8xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr {transpose_weight = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %x3 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x1x8xf32>
  %xk = graph.expand %x3 : (tensor<4x1x8xf32>) -> tensor<4x2x8xf32>
  %xcol = graph.reshape %xk : (tensor<4x2x8xf32>) -> tensor<8x8x1xf32>
  %entries = graph.reshape %index : (tensor<4x2xi64>) -> tensor<8x1xi64>
  %w1 = graph.gather_nd %gate_up, %entries : (tensor<3x32x8xf32>, tensor<8x1xi64>) -> tensor<8x32x8xf32>
  %p1 = graph.matmul %w1, %xcol : (tensor<8x32x8xf32>, tensor<8x8x1xf32>) -> tensor<8x32x1xf32>
  %p1r = graph.reshape %p1 : (tensor<8x32x1xf32>) -> tensor<8x32xf32>
  %halves:2 = graph.split %p1r {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %act = graph.silu %halves#0 : tensor<8x16xf32>
  %hidden = graph.mul %act, %halves#1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %w2 = graph.gather_nd %down, %entries : (tensor<3x8x16xf32>, tensor<8x1xi64>) -> tensor<8x8x16xf32>
  %hcol = graph.reshape %hidden : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
  %p2 = graph.matmul %w2, %hcol : (tensor<8x8x16xf32>, tensor<8x16x1xf32>) -> tensor<8x8x1xf32>
  %out = graph.reshape %p2 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
  %gcol = graph.reshape %top : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %weighted = graph.mul %out, %gcol : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %slots = graph.reshape %weighted : (tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %routed = graph.reduce_sum %slots {axes = array<i64: 0>, keepdims = false} : (tensor<2x4x8xf32>) -> tensor<4x8xf32>
  return %routed : tensor<4x8xf32>
}

// -----

// Each entry runs another entry's token (the tokens repeated slot-major):
// not graph.moe.
// CHECK-LABEL: func.func @tokens_in_other_order
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @tokens_in_other_order(%x: tensor<2x2x8xf32>, %wr: tensor<3x8xf32>) -> tensor<4x8xf32> {
  %gate_up = graph.weight "gate_up" {file = "w.bin", offset = 0 : i64, size = 3072 : i64} : tensor<3x32x8xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 3072 : i64, size = 1536 : i64} : tensor<3x8x16xf32>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr {transpose_weight = true} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %x3 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %xk = graph.expand %x3 : (tensor<1x4x8xf32>) -> tensor<2x4x8xf32>
  %xcol = graph.reshape %xk : (tensor<2x4x8xf32>) -> tensor<8x8x1xf32>
  %entries = graph.reshape %index : (tensor<4x2xi64>) -> tensor<8x1xi64>
  %w1 = graph.gather_nd %gate_up, %entries : (tensor<3x32x8xf32>, tensor<8x1xi64>) -> tensor<8x32x8xf32>
  %p1 = graph.matmul %w1, %xcol : (tensor<8x32x8xf32>, tensor<8x8x1xf32>) -> tensor<8x32x1xf32>
  %p1r = graph.reshape %p1 : (tensor<8x32x1xf32>) -> tensor<8x32xf32>
  %halves:2 = graph.split %p1r {axis = 1 : i64, sizes = array<i64: 16, 16>} : (tensor<8x32xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  %act = graph.silu %halves#0 : tensor<8x16xf32>
  %hidden = graph.mul %act, %halves#1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %w2 = graph.gather_nd %down, %entries : (tensor<3x8x16xf32>, tensor<8x1xi64>) -> tensor<8x8x16xf32>
  %hcol = graph.reshape %hidden : (tensor<8x16xf32>) -> tensor<8x16x1xf32>
  %p2 = graph.matmul %w2, %hcol : (tensor<8x8x16xf32>, tensor<8x16x1xf32>) -> tensor<8x8x1xf32>
  %out = graph.reshape %p2 : (tensor<8x8x1xf32>) -> tensor<8x8xf32>
  %gcol = graph.reshape %top : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %weighted = graph.mul %out, %gcol : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %slots = graph.reshape %weighted : (tensor<8x8xf32>) -> tensor<4x2x8xf32>
  %routed = graph.reduce_sum %slots {axes = array<i64: 1>, keepdims = false} : (tensor<4x2x8xf32>) -> tensor<4x8xf32>
  return %routed : tensor<4x8xf32>
}
