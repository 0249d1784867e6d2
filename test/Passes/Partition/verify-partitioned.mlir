// RUN: shardc-opt %s --split-input-file --shardc-verify-partitioned --verify-diagnostics | FileCheck %s

// A per-device program passes unchanged; a weight keeps its global sharding.
module {
  dist.mesh @mesh = <["tp"=2]>
  // CHECK-LABEL: func.func @partitioned
  // CHECK: graph.weight "w" {{.*}}dist.weight_shard
  // CHECK: dist.all_reduce
  func.func @partitioned(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
    %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 128, dist.weight_shard = #dist.sharding<@mesh, [{}, {}]>} : tensor<8x4xf32>
    %y = graph.linear %x, %w {transpose_weight = true} : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %z = dist.all_reduce %y on @mesh ["tp"] : tensor<2x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

func.func @composite(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'graph.composite' op must be inlined before lowering (run shardc-inline-composites)}}
  %0 = graph.composite "mlp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    %g = graph.gelu %a : tensor<2x8xf32>
    graph.yield %g : tensor<2x8xf32>
  }
  return %0 : tensor<2x8xf32>
}

// -----

// Every op left over is named, not only the first.
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @sharded(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    // expected-error @+1 {{'dist.reshard' op must become collectives before lowering (run shardc-partition)}}
    %0 = dist.reshard %x to <@mesh, [{"tp"}, {}]> : tensor<8x16xf32>
    // expected-error @+1 {{'graph.exp' op is still annotated with shardings (run shardc-partition)}}
    %1 = graph.exp %0 {dist.shardings = [#dist.sharding<@mesh, [{"tp"}, {}]>]} : tensor<8x16xf32>
    return %1 : tensor<8x16xf32>
  }
}

// -----

// The micro-batch axis is time, not devices: it must be gone.
// expected-error @+1 {{still has the micro-batch axis mb, which is time and not devices (run shardc-split-microbatches)}}
dist.mesh @mesh = <["mb"=2, "tp"=2]>
func.func @microbatched(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
