// RUN: shardc-opt %s --split-input-file --shardc-raise-moe | FileCheck %s

// Top-2-of-2 routing with dense dispatch: router -> softmax -> topk ->
// renormalize -> scatter into [tokens, experts] -> weighted sum of experts.
// CHECK-LABEL: func.func @moe
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<8x16xf32>
func.func @moe(%x: tensor<8x16xf32>, %wr: tensor<16x2xf32>, %w0: tensor<16x16xf32>, %w1: tensor<16x16xf32>, %residual: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %zeros = graph.constant dense<0.0> : tensor<8x2xf32>
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x2xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>)
  %sum = graph.reduce_sum %top {axes = array<i64: 1>, keepdims = true} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %norm = graph.div %top, %sum : (tensor<8x2xf32>, tensor<8x1xf32>) -> tensor<8x2xf32>
  %dense = graph.scatter_elements %zeros, %index, %norm {axis = 1 : i64, reduction = 0 : i32} : (tensor<8x2xf32>, tensor<8x2xi64>, tensor<8x2xf32>) -> tensor<8x2xf32>
  %e0 = graph.linear %x, %w0 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.linear %x, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %dense {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %g1 = graph.slice %dense {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %e0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %p1 = graph.mul %g1, %e1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %out = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.add %residual, %out : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: %[[M:.*]] = graph.composite "moe"(%[[X]], %{{.*}}) : ({{.*}}) -> tensor<8x16xf32> {
  // CHECK: graph.topk
  // CHECK: graph.scatter_elements
  // CHECK: graph.yield
  // CHECK: graph.add %{{.*}}, %[[M]]
  return %y : tensor<8x16xf32>
}

// -----

// A top-k over a softmax with no experts reading the same input is no MoE.
// CHECK-LABEL: func.func @router_only
func.func @router_only(%x: tensor<8x16xf32>, %wr: tensor<16x4xf32>) -> tensor<8x2xf32> {
  %logits = graph.linear %x, %wr : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x4xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<8x4xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>)
  // CHECK-NOT: graph.composite
  return %top : tensor<8x2xf32>
}

// -----

// The router and the experts view the tokens each their own way
// (transformers 4.4x's Mixtral: [T, H] for the router, [1, T, H] for the
// experts' gather): the block starts at what both views read.
// CHECK-LABEL: func.func @moe_views
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<2x4x16xf32>
func.func @moe_views(%x: tensor<2x4x16xf32>, %wr: tensor<16x2xf32>, %w0: tensor<16x16xf32>, %w1: tensor<16x16xf32>) -> tensor<2x4x16xf32> {
  %tokens = graph.reshape %x : (tensor<2x4x16xf32>) -> tensor<8x16xf32>
  %logits = graph.linear %tokens, %wr : (tensor<8x16xf32>, tensor<16x2xf32>) -> tensor<8x2xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<8x2xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xi64>)
  %rows3 = graph.reshape %x : (tensor<2x4x16xf32>) -> tensor<1x8x16xf32>
  %rows = graph.reshape %rows3 : (tensor<1x8x16xf32>) -> tensor<8x16xf32>
  %e0 = graph.linear %rows, %w0 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %e1 = graph.linear %rows, %w1 : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %g0 = graph.slice %top {starts = array<i64: 0, 0>, ends = array<i64: 8, 1>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %g1 = graph.slice %top {starts = array<i64: 0, 1>, ends = array<i64: 8, 2>, steps = array<i64: 1, 1>} : (tensor<8x2xf32>) -> tensor<8x1xf32>
  %p0 = graph.mul %g0, %e0 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %p1 = graph.mul %g1, %e1 : (tensor<8x1xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %out = graph.add %p0, %p1 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = graph.reshape %out : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  // CHECK: %[[M:.*]] = graph.composite "moe"(%[[X]], %{{.*}}) : ({{.*}}) -> tensor<8x16xf32> {
  // CHECK: graph.topk
  // CHECK: graph.yield
  // CHECK: graph.reshape %[[M]] : (tensor<8x16xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}
