// RUN: shardc-opt %s --split-input-file --shardc-verify-sharded --verify-diagnostics | FileCheck %s

// A sharded program passes unchanged.
module {
  dist.mesh @mesh = <["tp"=2]>
  // CHECK-LABEL: func.func @sharded
  // CHECK: dist.reshard
  func.func @sharded(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
    %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 128, dist.shardings = [#dist.sharding<@mesh, [{"tp"}, {}]>]} : tensor<8x4xf32>
    %y = graph.linear %x, %w {transpose_weight = true, dist.shardings = [#dist.sharding<@mesh, [{}, {"tp"}]>]} : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    %z = dist.reshard %y to <@mesh, [{}, {}]> : tensor<2x8xf32>
    return %z : tensor<2x8xf32>
  }
}

// -----

dist.mesh @mesh = <["tp"=2]>
func.func @collective(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'dist.all_reduce' op is a collective of the partitioned program; the sharded program has reshards (run shardc-partition once)}}
  %0 = dist.all_reduce %x on @mesh ["tp"] : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
// expected-error @+1 {{is not a pipeline stage (run shardc-pipeline-stages)}}
func.func @uncut(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{has no action lists (run shardc-pipeline-schedule)}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
  return
}
