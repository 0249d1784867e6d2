// RUN: shardc-opt %s --split-input-file --shardc-propagate-sharding | FileCheck %s

// One annotation (a column-parallel layer) decides the rest: the GELU keeps
// the split, the next layer takes its input as it comes (split along its
// contraction: row-parallel, a partial sum), and the result is made whole.
// Weights are cut to what each layer needs.
module {
  dist.mesh @mesh = <["tp"=2]>
  // CHECK-LABEL: func.func @mlp
  // CHECK: %[[W1:.*]] = graph.weight "w1" {{.*}}dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]
  // CHECK: %[[W2:.*]] = graph.weight "w2" {{.*}}dist.shardings = [#dist.sharding<@mesh, [{"tp"}, {}]>]
  // CHECK: %[[H:.*]] = graph.linear %{{.*}}, %[[W1]] {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]}
  // CHECK: %[[G:.*]] = graph.gelu %[[H]] {{.*}}#dist.sharding<@mesh, [{}, {"tp"}]>
  // CHECK: %[[Y:.*]] = graph.linear %[[G]], %[[W2]] {dist.shardings = [#dist.sharding<@mesh, [{}, {}], partial={"tp"}>]}
  // CHECK: %[[WHOLE:.*]] = dist.reshard %[[Y]] to <@mesh, [{}, {}]>
  // CHECK: return %[[WHOLE]]
  func.func @mlp(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w1 = graph.weight "w1" {file = "m.onnx", offset = 0 : i64, size = 512 : i64} : tensor<8x16xf32>
    %w2 = graph.weight "w2" {file = "m.onnx", offset = 512 : i64, size = 512 : i64} : tensor<16x8xf32>
    %0 = graph.linear %x, %w1 {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %1 = graph.gelu %0 : tensor<4x16xf32>
    %2 = graph.linear %1, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    return %2 : tensor<4x8xf32>
  }
}

// -----

// An argument's annotation is its share taken at the entry (every device
// receives the whole input); ops follow it; a weight read two ways is cut
// two ways.
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @argument
  // CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>})
  // CHECK: %[[SHARE:.*]] = dist.reshard %[[X]] to <@mesh, [{"dp"}, {}]>
  // CHECK-DAG: %[[WT:.*]] = graph.weight "w" {{.*}}#dist.sharding<@mesh, [{}, {"tp"}]>
  // CHECK-DAG: %[[WR:.*]] = graph.weight "w" {{.*}}#dist.sharding<@mesh, [{}, {}]>
  // CHECK: graph.relu %[[SHARE]] {{.*}}#dist.sharding<@mesh, [{"dp"}, {}]>
  // CHECK: graph.linear %{{.*}}, %[[WT]] {{.*}}#dist.sharding<@mesh, [{"dp"}, {"tp"}]>
  // CHECK: graph.linear %{{.*}}, %[[WR]] {{.*}}#dist.sharding<@mesh, [{"dp"}, {}]>
  func.func @argument(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [{"dp"}, {}]>}) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
    %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : tensor<8x8xf32>
    %0 = graph.relu %x : tensor<4x8xf32>
    %1 = graph.linear %0, %w {dist.shardings = [#dist.sharding<@mesh, [{"dp"}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %2 = graph.linear %0, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }
}

// -----

// Conflicting annotations: the add wants its operands split along dim 1, the
// producers give them along dim 0 and whole; both arrive by explicit
// reshards (one all-to-all's worth, one slice), shared by every reader.
module {
  dist.mesh @mesh = <["tp"=2]>
  // CHECK-LABEL: func.func @conflict
  // CHECK: %[[A:.*]] = graph.exp {{.*}}#dist.sharding<@mesh, [{"tp"}, {}]>
  // CHECK: %[[B:.*]] = graph.neg {{.*}}#dist.sharding<@mesh, [{}, {}]>
  // CHECK: %[[A1:.*]] = dist.reshard %[[A]] to <@mesh, [{}, {"tp"}]>
  // CHECK: %[[B1:.*]] = dist.reshard %[[B]] to <@mesh, [{}, {"tp"}]>
  // CHECK: %[[S:.*]] = graph.add %[[A1]], %[[B1]] {{.*}}#dist.sharding<@mesh, [{}, {"tp"}]>
  // CHECK: graph.mul %[[S]], %[[A1]]
  func.func @conflict(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %a = graph.exp %x {dist.shardings = [#dist.sharding<@mesh, [{"tp"}, {}]>]} : tensor<4x8xf32>
    %b = graph.neg %x {dist.shardings = [#dist.sharding<@mesh, [{}, {}]>]} : tensor<4x8xf32>
    %s = graph.add %a, %b {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %m = graph.mul %s, %a {dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    return %m : tensor<4x8xf32>
  }
}
