// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Reshards and collectives are checked against their mesh: known axes, each
// once, and local shapes that match the group size.

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reshard_unknown_mesh(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.reshard' op unknown mesh @nope}}
  %0 = dist.reshard %x to <@nope, [{}, {}]> : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reshard_not_divisible(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'dist.reshard' op dim 1 of size 6 is not divisible by 4 (axes "tp")}}
  %0 = dist.reshard %x to <@m, [{"dp"}, {"tp"}]> : tensor<4x6xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reshard_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.reshard' op sharding has 1 dims but the tensor has rank 2}}
  %0 = dist.reshard %x to <@m, [{"dp"}]> : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reshard_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "dist.reshard"(%x) <{sharding = #dist.sharding<@m, [{}, {}]>}> : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @unknown_mesh(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op unknown mesh @nope}}
  %0 = dist.all_reduce %x on @nope ["tp"] : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @unknown_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op unknown mesh axis "pp"; the mesh has "dp", "tp"}}
  %0 = dist.all_reduce %x on @m ["pp"] : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @repeated_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op mesh axis "tp" is used twice}}
  %0 = dist.all_reduce %x on @m ["tp", "dp", "tp"] : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @no_axes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op needs at least one mesh axis to run over}}
  %0 = dist.all_reduce %x on @m [] : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_reduce_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{all of {input, result} have same type}}
  %0 = "dist.all_reduce"(%x) <{mesh = @m, mesh_axes = ["tp"]}> : (tensor<4x8xf32>) -> tensor<4x2xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_gather_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op dim 2 is out of range; expected a dim in [0, 2)}}
  %0 = dist.all_gather %x on @m ["tp"] dim = 2 : tensor<4x8xf32> -> tensor<4x32xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_gather_negative_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op dim -1 is out of range; expected a dim in [0, 2)}}
  %0 = dist.all_gather %x on @m ["tp"] dim = -1 : tensor<4x8xf32> -> tensor<4x32xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_gather_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result shape must be the operand's with dim 1 gathered from 8 devices; expected [4, 64] but got [4, 32]}}
  %0 = dist.all_gather %x on @m ["dp", "tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_gather_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result shape must be the operand's with dim 0 gathered from 4 devices; expected [16, 8] but got [16, 8, 1]}}
  %0 = dist.all_gather %x on @m ["tp"] dim = 0 : tensor<4x8xf32> -> tensor<16x8x1xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_gather_element_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result element type differs from the operand's; expected 'f32' but got 'bf16'}}
  %0 = dist.all_gather %x on @m ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x32xbf16>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reduce_scatter_divisible(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op operand dim 1 of size 10 is not divisible by the group size 4}}
  %0 = dist.reduce_scatter %x on @m ["tp"] dim = 1 : tensor<4x10xf32> -> tensor<4x2xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reduce_scatter_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op result shape must be the operand's with dim 1 scattered over 4 devices; expected [4, 2] but got [4, 4]}}
  %0 = dist.reduce_scatter %x on @m ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @reduce_scatter_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dim 5 is out of range; expected a dim in [0, 2)}}
  %0 = dist.reduce_scatter %x on @m ["tp"] dim = 5 : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_to_all_same_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op split_dim and concat_dim are both 1; expected different dims}}
  %0 = dist.all_to_all %x on @m ["tp"] split_dim = 1 concat_dim = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_to_all_divisible(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op operand dim 1 of size 6 is not divisible by the group size 4}}
  %0 = dist.all_to_all %x on @m ["tp"] split_dim = 1 concat_dim = 0 : tensor<4x6xf32> -> tensor<16x1xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_to_all_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op result shape must be the operand's with dim 1 split and dim 0 concatenated over 4 devices; expected [16, 2] but got [4, 8]}}
  %0 = dist.all_to_all %x on @m ["tp"] split_dim = 1 concat_dim = 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_to_all_concat_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_to_all' op concat_dim 2 is out of range; expected a dim in [0, 2)}}
  %0 = dist.all_to_all %x on @m ["tp"] split_dim = 1 concat_dim = 2 : tensor<4x8xf32> -> tensor<4x2xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_slice_divisible(%x: tensor<3x8xf32>) {
  // expected-error @+1 {{'dist.all_slice' op operand dim 0 of size 3 is not divisible by the group size 2}}
  %0 = dist.all_slice %x on @m ["dp"] dim = 0 : tensor<3x8xf32> -> tensor<1x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @all_slice_shape(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_slice' op result shape must be the operand's with dim 0 sliced over 2 devices; expected [2, 8] but got [4, 8]}}
  %0 = dist.all_slice %x on @m ["dp"] dim = 0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @broadcast_root(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast' op root 4 is out of range; expected a group rank in [0, 4)}}
  %0 = dist.broadcast %x on @m ["tp"] root = 4 : tensor<4x8xf32>
  return
}

// -----

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @broadcast_negative_root(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.broadcast' op root -1 is out of range; expected a group rank in [0, 8)}}
  %0 = dist.broadcast %x on @m ["dp", "tp"] root = -1 : tensor<4x8xf32>
  return
}

// -----

func.func @send_outside_stage(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.send' op must be in a pipeline stage's function (one with dist.stage)}}
  dist.send %x to stage 1 transfer 0 : tensor<4x8xf32>
  return
}

// -----

func.func @send_backwards(%x: tensor<4x8xf32>) attributes {dist.stage = 2 : i64} {
  // expected-error @+1 {{'dist.send' op goes from stage 2 to stage 1; transfers go to a later stage}}
  dist.send %x to stage 1 transfer 0 : tensor<4x8xf32>
  return
}

// -----

func.func @recv_wrong_stage() attributes {dist.stage = 1 : i64} {
  // expected-error @+1 {{'dist.recv' op goes from stage 1 to stage 1; transfers go to a later stage}}
  %0 = dist.recv from stage 1 transfer 0 : tensor<4x8xf32>
  return
}

// -----

func.func @negative_transfer() attributes {dist.stage = 1 : i64} {
  // expected-error @+1 {{'dist.recv' op transfer -1 is negative}}
  %0 = dist.recv from stage 0 transfer -1 : tensor<4x8xf32>
  return
}

// -----

// expected-error @+1 {{'dist.pipeline' op pipeline_ranks 1 must be at least 2}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 1 : i64, schedule = "gpipe", virtual_stages = 1 : i64}

// -----

// expected-error @+1 {{'dist.pipeline' op a gpipe schedule has one stage per rank; virtual stages need the interleaved schedule}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 2 : i64}

// -----

// expected-error @+1 {{'dist.pipeline' op schedule 'pipedream': expected gpipe, interleaved, 1f1b, zb-h1 or zb-h2}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "pipedream", virtual_stages = 1 : i64}

// -----

// expected-error @+1 {{'dist.pipeline' op a zb-h1 schedule has one stage per rank; virtual stages need the interleaved schedule}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "zb-h1", virtual_stages = 2 : i64}

// -----

// expected-error @+1 {{'dist.pipeline' op has 1 action lists for 2 pipeline ranks}}
dist.pipeline {actions = [[]], microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
