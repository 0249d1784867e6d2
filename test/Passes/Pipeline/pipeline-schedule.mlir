// RUN: shardc-opt %s --split-input-file --shardc-pipeline-schedule | FileCheck %s

// GPipe, two micro-batches: rank 0 runs both forwards, each followed by its
// send; rank 1 receives each before its forward.
module {
  // CHECK: dist.pipeline {actions = {{\[}}[
  // CHECK-SAME: #dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>,
  // CHECK-SAME: #dist.action<forward, stage = 0, microbatch = 1, transfer = -1>, #dist.action<send, stage = 1, microbatch = 1, transfer = 0>], [
  // CHECK-SAME: #dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>,
  // CHECK-SAME: #dist.action<recv, stage = 0, microbatch = 1, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 1, transfer = -1>]]
  dist.pipeline {microbatches = 2 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    dist.send %x to stage 1 transfer 0 : tensor<4xf32>
    return
  }
  func.func @stage1() -> tensor<4xf32> attributes {dist.stage = 1 : i64} {
    %0 = dist.recv from stage 0 transfer 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Interleaved, two ranks with two stages each, two micro-batches: rank 0
// runs stage 0 for both micro-batches, then stage 2 for both.
module {
  // CHECK: dist.pipeline {actions = {{\[}}[
  // CHECK-SAME: #dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>,
  // CHECK-SAME: #dist.action<forward, stage = 0, microbatch = 1, transfer = -1>, #dist.action<send, stage = 1, microbatch = 1, transfer = 0>,
  // CHECK-SAME: #dist.action<recv, stage = 1, microbatch = 0, transfer = 1>, #dist.action<forward, stage = 2, microbatch = 0, transfer = -1>, #dist.action<send, stage = 3, microbatch = 0, transfer = 2>,
  // CHECK-SAME: #dist.action<recv, stage = 1, microbatch = 1, transfer = 1>, #dist.action<forward, stage = 2, microbatch = 1, transfer = -1>, #dist.action<send, stage = 3, microbatch = 1, transfer = 2>], [
  dist.pipeline {microbatches = 2 : i64, pipeline_ranks = 2 : i64, schedule = "interleaved", virtual_stages = 2 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    dist.send %x to stage 1 transfer 0 : tensor<4xf32>
    return
  }
  func.func @stage1() attributes {dist.stage = 1 : i64} {
    %0 = dist.recv from stage 0 transfer 0 : tensor<4xf32>
    dist.send %0 to stage 2 transfer 1 : tensor<4xf32>
    return
  }
  func.func @stage2() attributes {dist.stage = 2 : i64} {
    %0 = dist.recv from stage 1 transfer 1 : tensor<4xf32>
    dist.send %0 to stage 3 transfer 2 : tensor<4xf32>
    return
  }
  func.func @stage3() -> tensor<4xf32> attributes {dist.stage = 3 : i64} {
    %0 = dist.recv from stage 2 transfer 2 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// Action lists already there (written by hand or another tool) are kept and
// checked.
module {
  // CHECK: dist.pipeline {actions = {{\[}}[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>], [#dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>]]
  dist.pipeline {actions = [[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>], [#dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>]], microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    dist.send %x to stage 1 transfer 0 : tensor<4xf32>
    return
  }
  func.func @stage1() -> tensor<4xf32> attributes {dist.stage = 1 : i64} {
    %0 = dist.recv from stage 0 transfer 0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
