// RUN: shardc-opt %s --split-input-file --shardc-split-microbatches --verify-diagnostics

// A sum over the batch's rows mixes micro-batches.
dist.mesh @mesh = <["mb"=2]>
func.func @stage0(%x: tensor<4x4xf32>) -> tensor<2x4xf32> attributes {dist.stage = 0 : i64} {
  %s = dist.all_slice %x on @mesh ["mb"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{'dist.all_reduce' op works across micro-batches (mesh axis mb): the program mixes the rows of the batch here, so it cannot run in micro-batches; give --microbatches 1}}
  %r = dist.all_reduce %s on @mesh ["mb"] : tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

dist.mesh @mesh = <["mb"=2, "dp"=2]>
func.func @stage0(%x: tensor<4x4xf32>) -> tensor<1x4xf32> attributes {dist.stage = 0 : i64} {
  // expected-error @+1 {{splits the batch over mb inside another axis; expected mb first}}
  %s = dist.all_slice %x on @mesh ["dp", "mb"] dim = 0 : tensor<4x4xf32> -> tensor<1x4xf32>
  return %s : tensor<1x4xf32>
}
