// RUN: shardc-opt %s --split-input-file --shardc-raise-moe --shardc-raise-routed-experts | FileCheck %s

// transformers 4.x's loop over experts, densified: per expert the tokens of
// every (slot, token) entry gathered by a constant list, the expert's MLP,
// times the entry's gate (gathered from the flattened [T, k] gates), kept
// where the expert's one-hot mask row is set, and added into the token's row.
// One graph.moe: the tokens viewed as [T, H], the router's indices, the
// renormalized gates, the experts' weights stacked in expert order; the
// residual stays an add.
// CHECK-LABEL: func.func @scattered_entries
// CHECK: %[[FLAT:.*]] = graph.reshape %arg0
// CHECK: %[[TOP:.*]], %[[INDEX:.*]] = graph.topk
// CHECK: %[[SUM:.*]] = graph.reduce_sum %[[TOP]]
// CHECK: %[[GATES:.*]] = graph.div %[[TOP]], %[[SUM]]
// CHECK: %[[X:.*]] = graph.reshape %arg0 : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
// CHECK-DAG: %[[GATE:.*]] = graph.weight "gate0.stacked" {file = "w.bin", graph.parts = ["gate0", "gate1", "gate2"], offset = 0 : i64, part_offsets = array<i64: 0, 1584, 3168>, size = 1536 : i64} : tensor<3x8x16xf32>
// CHECK-DAG: %[[UP:.*]] = graph.weight "up0.stacked" {file = "w.bin", graph.parts = ["up0", "up1", "up2"], offset = 528 : i64, part_offsets = array<i64: 528, 2112, 3696>, size = 1536 : i64} : tensor<3x8x16xf32>
// CHECK-DAG: %[[DOWN:.*]] = graph.weight "down0.stacked" {file = "w.bin", graph.parts = ["down0", "down1", "down2"], offset = 1056 : i64, part_offsets = array<i64: 1056, 2640, 4224>, size = 1536 : i64} : tensor<3x16x8xf32>
// CHECK: %[[MOE:.*]] = graph.moe %[[X]], %[[INDEX]], %[[GATES]], experts(%[[GATE]], %[[UP]], %[[DOWN]]) {activation = "silu", experts = 3 : i64}
// CHECK-NEXT: graph.add %[[FLAT]], %[[MOE]]
// CHECK-NOT: graph.scatter_elements
// CHECK-NOT: graph.composite
func.func @scattered_entries(%x: tensor<2x2x8xf32>, %wr: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 528 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 1056 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 1584 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 2112 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 2640 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 3168 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 3696 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 4224 : i64, size = 512 : i64} : tensor<16x8xf32>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %cE = graph.constant dense<3> : tensor<i64>
  %expert0 = graph.constant dense<0> : tensor<i64>
  %expert1 = graph.constant dense<1> : tensor<i64>
  %expert2 = graph.constant dense<2> : tensor<i64>
  %range = graph.constant dense<[[[0, 1, 2]]]> : tensor<1x1x3xi64>
  %tokens = graph.constant dense<[0, 1, 2, 3, 0, 1, 2, 3]> : tensor<8xi64>
  %gatelist = graph.constant dense<[0, 2, 4, 6, 1, 3, 5, 7]> : tensor<8xi64>
  %zeros = graph.constant dense<0.0> : tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %rows0 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows1 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows2 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %total = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %gates = graph.div %top, %total : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %negative = graph.compare lt, %index, %c0 : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi1>
  %wrapped = graph.add %index, %cE : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  %chosen = graph.where %negative, %wrapped, %index : (tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %chosen3 = graph.reshape %chosen : (tensor<4x2xi64>) -> tensor<4x2x1xi64>
  %hot = graph.compare eq, %chosen3, %range : (tensor<4x2x1xi64>, tensor<1x1x3xi64>) -> tensor<4x2x3xi1>
  %onehot = graph.where %hot, %c1, %c0 : (tensor<4x2x3xi1>, tensor<i64>, tensor<i64>) -> tensor<4x2x3xi64>
  %masks = graph.transpose %onehot {perm = array<i64: 2, 1, 0>} : (tensor<4x2x3xi64>) -> tensor<3x2x4xi64>
  %x1 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %gateflat = graph.reshape %gates : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %mask0 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool0 = graph.cast %mask0 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked0 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in0 = graph.reshape %picked0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h0 = graph.linear %in0, %gate0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a0 = graph.silu %h0 : tensor<8x16xf32>
  %u0 = graph.linear %in0, %up0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g0 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p0 = graph.mul %o0, %g0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep0 = graph.reshape %bool0 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept0 = graph.where %keep0, %p0, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s0 = graph.scatter_elements %zeros, %rows0, %kept0 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask1 = graph.gather %masks, %expert1 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool1 = graph.cast %mask1 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked1 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in1 = graph.reshape %picked1 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h1 = graph.linear %in1, %gate1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a1 = graph.silu %h1 : tensor<8x16xf32>
  %u1 = graph.linear %in1, %up1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g1 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p1 = graph.mul %o1, %g1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep1 = graph.reshape %bool1 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept1 = graph.where %keep1, %p1, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = graph.scatter_elements %zeros, %rows1, %kept1 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask2 = graph.gather %masks, %expert2 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool2 = graph.cast %mask2 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked2 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in2 = graph.reshape %picked2 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.linear %in2, %gate2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a2 = graph.silu %h2 : tensor<8x16xf32>
  %u2 = graph.linear %in2, %up2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g2 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p2 = graph.mul %o2, %g2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep2 = graph.reshape %bool2 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept2 = graph.where %keep2, %p2, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s2 = graph.scatter_elements %zeros, %rows2, %kept2 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %acc0 = graph.add %s0, %zeros : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc1 = graph.add %acc0, %s1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc2 = graph.add %acc1, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %flat, %acc2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Which expert a branch is comes from its mask: the branch with weights
// gate0/up0/down0 keeps the entries that chose expert 1, so its weights are
// the second part of the stack.
// CHECK-LABEL: func.func @experts_in_mask_order
// CHECK-DAG: graph.weight "gate1.stacked" {file = "w.bin", graph.parts = ["gate1", "gate0", "gate2"], offset = 1584 : i64, part_offsets = array<i64: 1584, 0, 3168>
// CHECK-DAG: graph.weight "up1.stacked" {file = "w.bin", graph.parts = ["up1", "up0", "up2"], offset = 2112 : i64, part_offsets = array<i64: 2112, 528, 3696>
// CHECK-DAG: graph.weight "down1.stacked" {file = "w.bin", graph.parts = ["down1", "down0", "down2"], offset = 2640 : i64, part_offsets = array<i64: 2640, 1056, 4224>
// CHECK: graph.moe
func.func @experts_in_mask_order(%x: tensor<2x2x8xf32>, %wr: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 528 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 1056 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 1584 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 2112 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 2640 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 3168 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 3696 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 4224 : i64, size = 512 : i64} : tensor<16x8xf32>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %cE = graph.constant dense<3> : tensor<i64>
  %expert0 = graph.constant dense<0> : tensor<i64>
  %expert1 = graph.constant dense<1> : tensor<i64>
  %expert2 = graph.constant dense<2> : tensor<i64>
  %range = graph.constant dense<[[[0, 1, 2]]]> : tensor<1x1x3xi64>
  %tokens = graph.constant dense<[0, 1, 2, 3, 0, 1, 2, 3]> : tensor<8xi64>
  %gatelist = graph.constant dense<[0, 2, 4, 6, 1, 3, 5, 7]> : tensor<8xi64>
  %zeros = graph.constant dense<0.0> : tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %rows0 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows1 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows2 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %total = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %gates = graph.div %top, %total : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %negative = graph.compare lt, %index, %c0 : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi1>
  %wrapped = graph.add %index, %cE : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  %chosen = graph.where %negative, %wrapped, %index : (tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %chosen3 = graph.reshape %chosen : (tensor<4x2xi64>) -> tensor<4x2x1xi64>
  %hot = graph.compare eq, %chosen3, %range : (tensor<4x2x1xi64>, tensor<1x1x3xi64>) -> tensor<4x2x3xi1>
  %onehot = graph.where %hot, %c1, %c0 : (tensor<4x2x3xi1>, tensor<i64>, tensor<i64>) -> tensor<4x2x3xi64>
  %masks = graph.transpose %onehot {perm = array<i64: 2, 1, 0>} : (tensor<4x2x3xi64>) -> tensor<3x2x4xi64>
  %x1 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %gateflat = graph.reshape %gates : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %mask0 = graph.gather %masks, %expert1 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool0 = graph.cast %mask0 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked0 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in0 = graph.reshape %picked0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h0 = graph.linear %in0, %gate0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a0 = graph.silu %h0 : tensor<8x16xf32>
  %u0 = graph.linear %in0, %up0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g0 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p0 = graph.mul %o0, %g0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep0 = graph.reshape %bool0 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept0 = graph.where %keep0, %p0, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s0 = graph.scatter_elements %zeros, %rows0, %kept0 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask1 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool1 = graph.cast %mask1 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked1 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in1 = graph.reshape %picked1 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h1 = graph.linear %in1, %gate1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a1 = graph.silu %h1 : tensor<8x16xf32>
  %u1 = graph.linear %in1, %up1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g1 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p1 = graph.mul %o1, %g1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep1 = graph.reshape %bool1 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept1 = graph.where %keep1, %p1, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = graph.scatter_elements %zeros, %rows1, %kept1 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask2 = graph.gather %masks, %expert2 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool2 = graph.cast %mask2 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked2 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in2 = graph.reshape %picked2 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.linear %in2, %gate2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a2 = graph.silu %h2 : tensor<8x16xf32>
  %u2 = graph.linear %in2, %up2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g2 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p2 = graph.mul %o2, %g2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep2 = graph.reshape %bool2 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept2 = graph.where %keep2, %p2, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s2 = graph.scatter_elements %zeros, %rows2, %kept2 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %acc0 = graph.add %s0, %zeros : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc1 = graph.add %acc0, %s1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc2 = graph.add %acc1, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %flat, %acc2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Two branches masked for expert 0 and none for expert 1: not graph.moe (the
// composite stays).
// CHECK-LABEL: func.func @mask_wrong_expert
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @mask_wrong_expert(%x: tensor<2x2x8xf32>, %wr: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 528 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 1056 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 1584 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 2112 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 2640 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 3168 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 3696 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 4224 : i64, size = 512 : i64} : tensor<16x8xf32>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %cE = graph.constant dense<3> : tensor<i64>
  %expert0 = graph.constant dense<0> : tensor<i64>
  %expert1 = graph.constant dense<1> : tensor<i64>
  %expert2 = graph.constant dense<2> : tensor<i64>
  %range = graph.constant dense<[[[0, 1, 2]]]> : tensor<1x1x3xi64>
  %tokens = graph.constant dense<[0, 1, 2, 3, 0, 1, 2, 3]> : tensor<8xi64>
  %gatelist = graph.constant dense<[0, 2, 4, 6, 1, 3, 5, 7]> : tensor<8xi64>
  %zeros = graph.constant dense<0.0> : tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %rows0 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows1 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows2 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %total = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %gates = graph.div %top, %total : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %negative = graph.compare lt, %index, %c0 : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi1>
  %wrapped = graph.add %index, %cE : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  %chosen = graph.where %negative, %wrapped, %index : (tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %chosen3 = graph.reshape %chosen : (tensor<4x2xi64>) -> tensor<4x2x1xi64>
  %hot = graph.compare eq, %chosen3, %range : (tensor<4x2x1xi64>, tensor<1x1x3xi64>) -> tensor<4x2x3xi1>
  %onehot = graph.where %hot, %c1, %c0 : (tensor<4x2x3xi1>, tensor<i64>, tensor<i64>) -> tensor<4x2x3xi64>
  %masks = graph.transpose %onehot {perm = array<i64: 2, 1, 0>} : (tensor<4x2x3xi64>) -> tensor<3x2x4xi64>
  %x1 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %gateflat = graph.reshape %gates : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %mask0 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool0 = graph.cast %mask0 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked0 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in0 = graph.reshape %picked0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h0 = graph.linear %in0, %gate0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a0 = graph.silu %h0 : tensor<8x16xf32>
  %u0 = graph.linear %in0, %up0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g0 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p0 = graph.mul %o0, %g0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep0 = graph.reshape %bool0 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept0 = graph.where %keep0, %p0, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s0 = graph.scatter_elements %zeros, %rows0, %kept0 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask1 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool1 = graph.cast %mask1 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked1 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in1 = graph.reshape %picked1 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h1 = graph.linear %in1, %gate1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a1 = graph.silu %h1 : tensor<8x16xf32>
  %u1 = graph.linear %in1, %up1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g1 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p1 = graph.mul %o1, %g1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep1 = graph.reshape %bool1 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept1 = graph.where %keep1, %p1, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = graph.scatter_elements %zeros, %rows1, %kept1 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask2 = graph.gather %masks, %expert2 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool2 = graph.cast %mask2 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked2 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in2 = graph.reshape %picked2 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.linear %in2, %gate2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a2 = graph.silu %h2 : tensor<8x16xf32>
  %u2 = graph.linear %in2, %up2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g2 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p2 = graph.mul %o2, %g2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep2 = graph.reshape %bool2 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept2 = graph.where %keep2, %p2, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s2 = graph.scatter_elements %zeros, %rows2, %kept2 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %acc0 = graph.add %s0, %zeros : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc1 = graph.add %acc0, %s1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc2 = graph.add %acc1, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %flat, %acc2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// One expert's entries are added into the next token's row: not graph.moe.
// CHECK-LABEL: func.func @scatter_to_other_rows
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @scatter_to_other_rows(%x: tensor<2x2x8xf32>, %wr: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 528 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 1056 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 1584 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 2112 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 2640 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 3168 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 3696 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 4224 : i64, size = 512 : i64} : tensor<16x8xf32>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %cE = graph.constant dense<3> : tensor<i64>
  %expert0 = graph.constant dense<0> : tensor<i64>
  %expert1 = graph.constant dense<1> : tensor<i64>
  %expert2 = graph.constant dense<2> : tensor<i64>
  %range = graph.constant dense<[[[0, 1, 2]]]> : tensor<1x1x3xi64>
  %tokens = graph.constant dense<[0, 1, 2, 3, 0, 1, 2, 3]> : tensor<8xi64>
  %gatelist = graph.constant dense<[0, 2, 4, 6, 1, 3, 5, 7]> : tensor<8xi64>
  %zeros = graph.constant dense<0.0> : tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %rows0 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows1 = graph.constant dense<[[1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0]]> : tensor<8x8xi64>
  %rows2 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %total = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %gates = graph.div %top, %total : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %negative = graph.compare lt, %index, %c0 : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi1>
  %wrapped = graph.add %index, %cE : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  %chosen = graph.where %negative, %wrapped, %index : (tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %chosen3 = graph.reshape %chosen : (tensor<4x2xi64>) -> tensor<4x2x1xi64>
  %hot = graph.compare eq, %chosen3, %range : (tensor<4x2x1xi64>, tensor<1x1x3xi64>) -> tensor<4x2x3xi1>
  %onehot = graph.where %hot, %c1, %c0 : (tensor<4x2x3xi1>, tensor<i64>, tensor<i64>) -> tensor<4x2x3xi64>
  %masks = graph.transpose %onehot {perm = array<i64: 2, 1, 0>} : (tensor<4x2x3xi64>) -> tensor<3x2x4xi64>
  %x1 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %gateflat = graph.reshape %gates : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %mask0 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool0 = graph.cast %mask0 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked0 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in0 = graph.reshape %picked0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h0 = graph.linear %in0, %gate0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a0 = graph.silu %h0 : tensor<8x16xf32>
  %u0 = graph.linear %in0, %up0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g0 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p0 = graph.mul %o0, %g0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep0 = graph.reshape %bool0 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept0 = graph.where %keep0, %p0, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s0 = graph.scatter_elements %zeros, %rows0, %kept0 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask1 = graph.gather %masks, %expert1 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool1 = graph.cast %mask1 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked1 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in1 = graph.reshape %picked1 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h1 = graph.linear %in1, %gate1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a1 = graph.silu %h1 : tensor<8x16xf32>
  %u1 = graph.linear %in1, %up1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g1 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p1 = graph.mul %o1, %g1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep1 = graph.reshape %bool1 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept1 = graph.where %keep1, %p1, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = graph.scatter_elements %zeros, %rows1, %kept1 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask2 = graph.gather %masks, %expert2 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool2 = graph.cast %mask2 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked2 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in2 = graph.reshape %picked2 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.linear %in2, %gate2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a2 = graph.silu %h2 : tensor<8x16xf32>
  %u2 = graph.linear %in2, %up2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g2 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p2 = graph.mul %o2, %g2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep2 = graph.reshape %bool2 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept2 = graph.where %keep2, %p2, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s2 = graph.scatter_elements %zeros, %rows2, %kept2 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %acc0 = graph.add %s0, %zeros : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc1 = graph.add %acc0, %s1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc2 = graph.add %acc1, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %flat, %acc2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// The gates are gathered in slot-major order while the entries are
// token-major: each entry weighted by another entry's gate, not graph.moe.
// CHECK-LABEL: func.func @gates_of_other_entries
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @gates_of_other_entries(%x: tensor<2x2x8xf32>, %wr: tensor<8x3xf32>) -> tensor<4x8xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 528 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 1056 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 1584 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 2112 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 2640 : i64, size = 512 : i64} : tensor<16x8xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 3168 : i64, size = 512 : i64} : tensor<8x16xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 3696 : i64, size = 512 : i64} : tensor<8x16xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 4224 : i64, size = 512 : i64} : tensor<16x8xf32>
  %c0 = graph.constant dense<0> : tensor<i64>
  %c1 = graph.constant dense<1> : tensor<i64>
  %cE = graph.constant dense<3> : tensor<i64>
  %expert0 = graph.constant dense<0> : tensor<i64>
  %expert1 = graph.constant dense<1> : tensor<i64>
  %expert2 = graph.constant dense<2> : tensor<i64>
  %range = graph.constant dense<[[[0, 1, 2]]]> : tensor<1x1x3xi64>
  %tokens = graph.constant dense<[0, 1, 2, 3, 0, 1, 2, 3]> : tensor<8xi64>
  %gatelist = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %zeros = graph.constant dense<0.0> : tensor<4x8xf32>
  %zero = graph.constant dense<0.0> : tensor<f32>
  %rows0 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows1 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %rows2 = graph.constant dense<[[0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3]]> : tensor<8x8xi64>
  %flat = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<4x8xf32>
  %logits = graph.linear %flat, %wr : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<4x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %total = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<4x2xf32>) -> tensor<4x1xf32>
  %gates = graph.div %top, %total : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x2xf32>
  %negative = graph.compare lt, %index, %c0 : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi1>
  %wrapped = graph.add %index, %cE : (tensor<4x2xi64>, tensor<i64>) -> tensor<4x2xi64>
  %chosen = graph.where %negative, %wrapped, %index : (tensor<4x2xi1>, tensor<4x2xi64>, tensor<4x2xi64>) -> tensor<4x2xi64>
  %chosen3 = graph.reshape %chosen : (tensor<4x2xi64>) -> tensor<4x2x1xi64>
  %hot = graph.compare eq, %chosen3, %range : (tensor<4x2x1xi64>, tensor<1x1x3xi64>) -> tensor<4x2x3xi1>
  %onehot = graph.where %hot, %c1, %c0 : (tensor<4x2x3xi1>, tensor<i64>, tensor<i64>) -> tensor<4x2x3xi64>
  %masks = graph.transpose %onehot {perm = array<i64: 2, 1, 0>} : (tensor<4x2x3xi64>) -> tensor<3x2x4xi64>
  %x1 = graph.reshape %x : (tensor<2x2x8xf32>) -> tensor<1x4x8xf32>
  %gateflat = graph.reshape %gates : (tensor<4x2xf32>) -> tensor<8x1xf32>
  %mask0 = graph.gather %masks, %expert0 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool0 = graph.cast %mask0 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked0 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in0 = graph.reshape %picked0 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h0 = graph.linear %in0, %gate0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a0 = graph.silu %h0 : tensor<8x16xf32>
  %u0 = graph.linear %in0, %up0 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g0 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p0 = graph.mul %o0, %g0 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep0 = graph.reshape %bool0 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept0 = graph.where %keep0, %p0, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s0 = graph.scatter_elements %zeros, %rows0, %kept0 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask1 = graph.gather %masks, %expert1 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool1 = graph.cast %mask1 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked1 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in1 = graph.reshape %picked1 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h1 = graph.linear %in1, %gate1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a1 = graph.silu %h1 : tensor<8x16xf32>
  %u1 = graph.linear %in1, %up1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g1 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p1 = graph.mul %o1, %g1 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep1 = graph.reshape %bool1 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept1 = graph.where %keep1, %p1, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s1 = graph.scatter_elements %zeros, %rows1, %kept1 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mask2 = graph.gather %masks, %expert2 {axis = 0 : i64} : (tensor<3x2x4xi64>, tensor<i64>) -> tensor<2x4xi64>
  %bool2 = graph.cast %mask2 : tensor<2x4xi64> to tensor<2x4xi1>
  %picked2 = graph.gather %x1, %tokens {axis = 1 : i64} : (tensor<1x4x8xf32>, tensor<8xi64>) -> tensor<1x8x8xf32>
  %in2 = graph.reshape %picked2 : (tensor<1x8x8xf32>) -> tensor<8x8xf32>
  %h2 = graph.linear %in2, %gate2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a2 = graph.silu %h2 : tensor<8x16xf32>
  %u2 = graph.linear %in2, %up2 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %g2 = graph.gather %gateflat, %gatelist {axis = 0 : i64} : (tensor<8x1xf32>, tensor<8xi64>) -> tensor<8x1xf32>
  %p2 = graph.mul %o2, %g2 : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %keep2 = graph.reshape %bool2 : (tensor<2x4xi1>) -> tensor<8x1xi1>
  %kept2 = graph.where %keep2, %p2, %zero : (tensor<8x1xi1>, tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %s2 = graph.scatter_elements %zeros, %rows2, %kept2 {axis = 0 : i64, reduction = 1 : i32} : (tensor<4x8xf32>, tensor<8x8xi64>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %acc0 = graph.add %s0, %zeros : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc1 = graph.add %acc0, %s1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %acc2 = graph.add %acc1, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %flat, %acc2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
