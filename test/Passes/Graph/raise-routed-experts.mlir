// RUN: shardc-opt %s --split-input-file --shardc-raise-moe --shardc-raise-routed-experts | FileCheck %s

// The dense gate table spelling (the MoE fixture's): every expert on every
// token, each scaled by its column of scatter(zeros, topk indices, gates).
// It becomes one graph.moe whose stacked weights name the experts' bytes
// where they are (part_offsets, in expert order) and whose gates are what
// was scattered into the table.
// CHECK-LABEL: func.func @dense_gate_table
// CHECK: %[[TOP:.*]], %[[INDEX:.*]] = graph.topk
// CHECK-DAG: %[[GATE:.*]] = graph.weight "gate0.stacked" {file = "w.bin", graph.parts = ["gate0", "gate1", "gate2", "gate3"], offset = 0 : i64, part_offsets = array<i64: 0, 6192, 12384, 18576>, size = 8192 : i64} : tensor<4x16x32xf32>
// CHECK-DAG: %[[UP:.*]] = graph.weight "up0.stacked" {file = "w.bin", graph.parts = ["up0", "up1", "up2", "up3"], offset = 2064 : i64, part_offsets = array<i64: 2064, 8256, 14448, 20640>, size = 8192 : i64} : tensor<4x16x32xf32>
// CHECK-DAG: %[[DOWN:.*]] = graph.weight "down0.stacked" {file = "w.bin", graph.parts = ["down0", "down1", "down2", "down3"], offset = 4128 : i64, part_offsets = array<i64: 4128, 10320, 16512, 22704>, size = 8192 : i64} : tensor<4x32x16xf32>
// CHECK: %[[MOE:.*]] = graph.moe %arg0, %[[INDEX]], %[[TOP]], experts(%[[GATE]], %[[UP]], %[[DOWN]]) {activation = "silu", experts = 4 : i64}
// CHECK-NOT: graph.scatter_elements
// CHECK-NOT: graph.slice
// CHECK: graph.add %arg0, %[[MOE]]
func.func @dense_gate_table(%x: tensor<8x16xf32>, %wr: tensor<16x4xf32>) -> tensor<8x16xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 2064 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 4128 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 6192 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 8256 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 10320 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 12384 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 14448 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 16512 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate3 = graph.weight "gate3" {file = "w.bin", offset = 18576 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up3 = graph.weight "up3" {file = "w.bin", offset = 20640 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down3 = graph.weight "down3" {file = "w.bin", offset = 22704 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %zeros = graph.constant dense<0.0> : tensor<8x4xf32>
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x4xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<8x4xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>)
  %table = graph.scatter_elements %zeros, %index, %top {axis = 1 : i64, reduction = 0 : i32} : (tensor<8x4xf32>, tensor<8x2xi64>, tensor<8x2xf32>) -> tensor<8x4xf32>
  %h0 = graph.linear %x, %gate0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a0 = graph.silu %h0 : tensor<8x32xf32>
  %u0 = graph.linear %x, %up0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %table {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %o0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h1 = graph.linear %x, %gate1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a1 = graph.silu %h1 : tensor<8x32xf32>
  %u1 = graph.linear %x, %up1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g1 = graph.slice %table {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %p1 = graph.mul %g1, %o1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h2 = graph.linear %x, %gate2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a2 = graph.silu %h2 : tensor<8x32xf32>
  %u2 = graph.linear %x, %up2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g2 = graph.slice %table {starts = array<i64: 0, 2>, ends = array<i64: 8, 3>, steps = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %p2 = graph.mul %g2, %o2 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h3 = graph.linear %x, %gate3 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a3 = graph.silu %h3 : tensor<8x32xf32>
  %u3 = graph.linear %x, %up3 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m3 = graph.mul %a3, %u3 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o3 = graph.linear %m3, %down3 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g3 = graph.slice %table {starts = array<i64: 0, 3>, ends = array<i64: 8, 4>, steps = array<i64: 1, 1>} : (tensor<8x4xf32>) -> tensor<8x1xf32>
  %p3 = graph.mul %g3, %o3 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s0 = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s1 = graph.add %s0, %p2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s2 = graph.add %s1, %p3 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.add %x, %s2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// The activation is carried over.
// CHECK-LABEL: func.func @gelu
// CHECK: graph.moe {{.*}} {activation = "gelu", experts = 2 : i64}
func.func @gelu(%x: tensor<8x16xf32>, %wr: tensor<16x2xf32>) -> tensor<8x16xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 2064 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 4128 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 6192 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 8256 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 10320 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %zeros = graph.constant dense<0.0> : tensor<8x2xf32>
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x2xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 1 : i64, largest = true, sorted = true} : (tensor<8x2xf32>) -> (tensor<8x1xf32>, tensor<8x1xi64>)
  %table = graph.scatter_elements %zeros, %index, %top {axis = 1 : i64, reduction = 0 : i32} : (tensor<8x2xf32>, tensor<8x1xi64>, tensor<8x1xf32>) -> tensor<8x2xf32>
  %h0 = graph.linear %x, %gate0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a0 = graph.gelu %h0 : tensor<8x32xf32>
  %u0 = graph.linear %x, %up0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %table {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %o0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h1 = graph.linear %x, %gate1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a1 = graph.gelu %h1 : tensor<8x32xf32>
  %u1 = graph.linear %x, %up1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g1 = graph.slice %table {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p1 = graph.mul %g1, %o1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s0 = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.add %x, %s0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A table that does not start from zeros weights unchosen experts too: not
// graph.moe (the composite stays).
// CHECK-LABEL: func.func @table_not_zeros
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @table_not_zeros(%x: tensor<8x16xf32>, %wr: tensor<16x2xf32>) -> tensor<8x16xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 2064 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 4128 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 6192 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 8256 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 10320 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %zeros = graph.constant dense<1.0> : tensor<8x2xf32>
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x2xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 1 : i64, largest = true, sorted = true} : (tensor<8x2xf32>) -> (tensor<8x1xf32>, tensor<8x1xi64>)
  %table = graph.scatter_elements %zeros, %index, %top {axis = 1 : i64, reduction = 0 : i32} : (tensor<8x2xf32>, tensor<8x1xi64>, tensor<8x1xf32>) -> tensor<8x2xf32>
  %h0 = graph.linear %x, %gate0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a0 = graph.silu %h0 : tensor<8x32xf32>
  %u0 = graph.linear %x, %up0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %table {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %o0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h1 = graph.linear %x, %gate1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a1 = graph.silu %h1 : tensor<8x32xf32>
  %u1 = graph.linear %x, %up1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g1 = graph.slice %table {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p1 = graph.mul %g1, %o1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s0 = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.add %x, %s0 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// An expert's column read twice (and another never): not graph.moe.
// CHECK-LABEL: func.func @column_twice
// CHECK-NOT: graph.moe
// CHECK: graph.composite "moe"
// CHECK-NOT: graph.moe
func.func @column_twice(%x: tensor<8x16xf32>, %wr: tensor<16x3xf32>) -> tensor<8x16xf32> {
  %gate0 = graph.weight "gate0" {file = "w.bin", offset = 0 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up0 = graph.weight "up0" {file = "w.bin", offset = 2064 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down0 = graph.weight "down0" {file = "w.bin", offset = 4128 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate1 = graph.weight "gate1" {file = "w.bin", offset = 6192 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up1 = graph.weight "up1" {file = "w.bin", offset = 8256 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down1 = graph.weight "down1" {file = "w.bin", offset = 10320 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %gate2 = graph.weight "gate2" {file = "w.bin", offset = 12384 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %up2 = graph.weight "up2" {file = "w.bin", offset = 14448 : i64, size = 2048 : i64} : tensor<16x32xf32>
  %down2 = graph.weight "down2" {file = "w.bin", offset = 16512 : i64, size = 2048 : i64} : tensor<32x16xf32>
  %zeros = graph.constant dense<0.0> : tensor<8x3xf32>
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x3xf32>) -> tensor<8x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 1 : i64, largest = true, sorted = true} : (tensor<8x3xf32>) -> (tensor<8x1xf32>, tensor<8x1xi64>)
  %table = graph.scatter_elements %zeros, %index, %top {axis = 1 : i64, reduction = 0 : i32} : (tensor<8x3xf32>, tensor<8x1xi64>, tensor<8x1xf32>) -> tensor<8x3xf32>
  %h0 = graph.linear %x, %gate0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a0 = graph.silu %h0 : tensor<8x32xf32>
  %u0 = graph.linear %x, %up0 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m0 = graph.mul %a0, %u0 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o0 = graph.linear %m0, %down0 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %table {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x3xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %o0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h1 = graph.linear %x, %gate1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a1 = graph.silu %h1 : tensor<8x32xf32>
  %u1 = graph.linear %x, %up1 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m1 = graph.mul %a1, %u1 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o1 = graph.linear %m1, %down1 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g1 = graph.slice %table {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x3xf32>) -> tensor<8x1xf32>
  %p1 = graph.mul %g1, %o1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %h2 = graph.linear %x, %gate2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a2 = graph.silu %h2 : tensor<8x32xf32>
  %u2 = graph.linear %x, %up2 : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %m2 = graph.mul %a2, %u2 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %o2 = graph.linear %m2, %down2 : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %g2 = graph.slice %table {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x3xf32>) -> tensor<8x1xf32>
  %p2 = graph.mul %g2, %o2 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s0 = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %s1 = graph.add %s0, %p2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.add %x, %s1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
