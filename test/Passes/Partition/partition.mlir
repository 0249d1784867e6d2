// RUN: shardc-opt %s --split-input-file --shardc-partition | FileCheck %s

// Every kind of reshard becomes its collective on local shapes.
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @reshards
  // CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)
  func.func @reshards(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
    // A whole input: each device takes its block, no communication.
    // CHECK: %[[S:.*]] = dist.all_slice %[[X]] on @mesh ["dp", "tp"] dim = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
    %0 = dist.reshard %x to <@mesh, [{"dp", "tp"}, {}]> : tensor<8x16xf32>
    // CHECK: %[[E:.*]] = graph.exp %[[S]] : tensor<2x16xf32>
    %1 = graph.exp %0 {dist.shardings = [#dist.sharding<@mesh, [{"dp", "tp"}, {}]>]} : tensor<8x16xf32>
    // tp moves from dim 0 to dim 1.
    // CHECK: %[[M:.*]] = dist.all_to_all %[[E]] on @mesh ["tp"] split_dim = 1 concat_dim = 0 : tensor<2x16xf32> -> tensor<4x8xf32>
    %2 = dist.reshard %1 to <@mesh, [{"dp"}, {"tp"}]> : tensor<8x16xf32>
    // A contraction over the split dim leaves a pending sum.
    // CHECK: %[[P:.*]] = graph.reduce_sum %[[M]] {{.*}} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    %3 = graph.reduce_sum %2 {axes = array<i64: 1>, keepdims = true, dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {}], partial={"tp"}>]} : (tensor<8x16xf32>) -> tensor<8x1xf32>
    // Summed into a split over tp: a reduce-scatter; then gathered whole.
    // CHECK: %[[R:.*]] = dist.reduce_scatter %[[P]] on @mesh ["tp"] dim = 0 : tensor<4x1xf32> -> tensor<2x1xf32>
    %4 = dist.reshard %3 to <@mesh, [{"dp", "tp"}, {}]> : tensor<8x1xf32>
    // CHECK: %[[G1:.*]] = dist.all_gather %[[R]] on @mesh ["tp"] dim = 0 : tensor<2x1xf32> -> tensor<4x1xf32>
    // CHECK: %[[G2:.*]] = dist.all_gather %[[G1]] on @mesh ["dp"] dim = 0 : tensor<4x1xf32> -> tensor<8x1xf32>
    %5 = dist.reshard %4 to <@mesh, [{}, {}]> : tensor<8x1xf32>
    // Summed everywhere: an all-reduce.
    // CHECK: %[[A:.*]] = dist.all_reduce %[[P]] on @mesh ["tp"] : tensor<4x1xf32>
    %6 = dist.reshard %3 to <@mesh, [{"dp"}, {}]> : tensor<8x1xf32>
    // CHECK: %[[B:.*]] = graph.mul %[[M]], %[[A]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    %7 = graph.mul %2, %6 {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}]>]} : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    %8 = dist.reshard %7 to <@mesh, [{}, {}]> : tensor<8x16xf32>
    %9 = graph.mul %x, %5 : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
    return %8, %9 : tensor<8x16xf32>, tensor<8x16xf32>
  }
}

// -----

// A weight takes its local type and keeps its global sharding for the
// artifact writer; a slice taking all of a split dim ends at its local size.
module {
  dist.mesh @mesh = <["tp"=2]>
  // CHECK-LABEL: func.func @weight_and_slice
  // CHECK: %[[W:.*]] = graph.weight "w" {box_offsets = array<i64: 0, 0>, dist.weight_shard = #dist.sharding<@mesh, [{}, {"tp"}]>, {{.*}}stored_shape = array<i64: 8, 16>} : tensor<8x8xf32>
  // CHECK: %[[Y:.*]] = graph.linear %{{.*}}, %[[W]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.slice %[[Y]] {ends = array<i64: 2, 8>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<2x8xf32>
  func.func @weight_and_slice(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
    %w = graph.weight "w" {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>], file = "m.onnx", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
    %0 = graph.linear %x, %w {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = graph.slice %0 {starts = array<i64: 0, 0>, ends = array<i64: 2, 16>, steps = array<i64: 1, 1>, dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x16xf32>) -> tensor<2x16xf32>
    %2 = dist.reshard %1 to <@mesh, [{}, {}]> : tensor<2x16xf32>
    return %2 : tensor<2x16xf32>
  }
}
