// RUN: shardc-opt %s --split-input-file --shardc-pipeline-schedule --verify-diagnostics

// Rank 1 receives micro-batch 1 first; rank 0 sends micro-batch 0 first.
module {
  // expected-error @+1 {{the schedule cannot run: pp rank 1, action 0 (recv transfer 0 microbatch 1 from stage 0): the next message from pp rank 0 is transfer 0 microbatch 0}}
  dist.pipeline {actions = [[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 0, microbatch = 1, transfer = -1>, #dist.action<send, stage = 1, microbatch = 1, transfer = 0>], [#dist.action<recv, stage = 0, microbatch = 1, transfer = 0>, #dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>, #dist.action<forward, stage = 1, microbatch = 1, transfer = -1>]], microbatches = 2 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
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

// A receive waits for a send no rank makes: a deadlock.
module {
  // expected-error @+1 {{the schedule cannot run: pp rank 1, action 0 (recv transfer 0 microbatch 0 from stage 0): waits forever (deadlock: no peer sends it)}}
  dist.pipeline {actions = [[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>], [#dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>]], microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
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

// The sizes of a transfer's two ends must agree.
module {
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    dist.send %x to stage 1 transfer 0 : tensor<4xf32>
    return
  }
  func.func @stage1() -> tensor<8xf32> attributes {dist.stage = 1 : i64} {
    // expected-error @+1 {{does not match the send of transfer 0 (stage 0 to 1, 'tensor<4xf32>')}}
    %0 = dist.recv from stage 0 transfer 0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

module {
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    // expected-error @+1 {{sends transfer 0, which no stage receives}}
    dist.send %x to stage 1 transfer 0 : tensor<4xf32>
    return
  }
  func.func @stage1() attributes {dist.stage = 1 : i64} {
    return
  }
}

// -----

module {
  // expected-error @+1 {{has 2 stages but the module 1 stage functions}}
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
    return
  }
}

// -----

module {
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  // expected-error @+1 {{expected one function per pipeline stage 0..1 (dist.stage); run shardc-pipeline-stages first}}
  func.func @main(%x: tensor<4xf32>) {
    return
  }
}
