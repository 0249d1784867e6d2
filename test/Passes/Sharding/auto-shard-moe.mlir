// RUN: shardc-opt %s --shardc-shard | FileCheck %s

// One expert of a routed MoE block as shardc-densify-selections leaves it,
// on tp=2. Megatron-LM's plan: the router's small weight whole on every rank
// (no collective for the scores), the expert column- then row-parallel, and
// its partial sums carried through the routing weight, the select of the
// chosen entries and the scatter-add back to tokens (all linear in them)
// to one all-reduce at the end.
// CHECK-LABEL: func.func @main
// CHECK-DAG: graph.weight "router" {{.*}}#dist.sharding<@mesh, [{}, {}]>
// CHECK-DAG: graph.weight "w1" {{.*}}#dist.sharding<@mesh, [{}, {"tp"}]>
// CHECK-DAG: graph.weight "w2" {{.*}}#dist.sharding<@mesh, [{"tp"}, {}]>
// CHECK: graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}]>{{.*}} -> tensor<32x4xf32>
// CHECK-NOT: dist.reshard
// CHECK: graph.topk
// CHECK-NOT: dist.reshard
// CHECK: graph.linear {{.*}}#dist.sharding<@mesh, [{}, {"tp"}]>
// CHECK-NOT: dist.reshard
// CHECK: graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}], partial={"tp"}>
// CHECK-NEXT: graph.mul {{.*}}#dist.sharding<@mesh, [{}, {}], partial={"tp"}>
// CHECK-NEXT: graph.where {{.*}}#dist.sharding<@mesh, [{}, {}], partial={"tp"}>
// CHECK-NEXT: graph.scatter_elements {{.*}}#dist.sharding<@mesh, [{}, {}], partial={"tp"}>
// CHECK-NEXT: %[[SUM:.*]] = dist.reshard %{{.*}} to <@mesh, [{}, {}]>
// CHECK-NOT: dist.reshard
// CHECK: return
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @main(%x: tensor<32x64xf32>, %s: tensor<64x1xf32>, %c: tensor<64x1xi1>, %token: tensor<64xi64>, %idx: tensor<64x64xi64>) -> (tensor<32x64xf32>, tensor<32x2xi64>) {
    %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 1024 : i64} : tensor<64x4xf32>
    %w1 = graph.weight "w1" {file = "w.bin", offset = 1024 : i64, size = 8192 : i64} : tensor<64x32xf32>
    %w2 = graph.weight "w2" {file = "w.bin", offset = 9216 : i64, size = 8192 : i64} : tensor<32x64xf32>
    %scores = graph.linear %x, %router : (tensor<32x64xf32>, tensor<64x4xf32>) -> tensor<32x4xf32>
    %p = graph.softmax %scores {axis = 1 : i64} : tensor<32x4xf32>
    %values, %chosen = graph.topk %p {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<32x4xf32>) -> (tensor<32x2xf32>, tensor<32x2xi64>)
    %rows = graph.gather %x, %token {axis = 0 : i64} : (tensor<32x64xf32>, tensor<64xi64>) -> tensor<64x64xf32>
    %h = graph.linear %rows, %w1 : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
    %a = graph.silu %h : tensor<64x32xf32>
    %o = graph.linear %a, %w2 : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %m = graph.mul %o, %s : (tensor<64x64xf32>, tensor<64x1xf32>) -> tensor<64x64xf32>
    %z = graph.constant dense<0.0> : tensor<f32>
    %wm = graph.where %c, %m, %z : (tensor<64x1xi1>, tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
    %zeros = graph.constant dense<0.0> : tensor<32x64xf32>
    %r = graph.scatter_elements %zeros, %idx, %wm {axis = 0 : i64, reduction = 1 : i32} : (tensor<32x64xf32>, tensor<64x64xi64>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %y = graph.add %x, %r : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
    return %y, %chosen : tensor<32x64xf32>, tensor<32x2xi64>
  }
}
