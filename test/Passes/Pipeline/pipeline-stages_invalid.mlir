// RUN: shardc-opt %s --split-input-file --shardc-pipeline-stages="device-memory=40000" --verify-diagnostics

// Two ops to divide cannot make four stages (the negation of the input is
// copied where it is needed, not divided).
module {
  // expected-error @+1 {{the program has 2 ops that stages divide (weights, constants and cheap ops of the inputs alone are copied into every stage that needs them); it cannot be cut into 4 stages}}
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 4 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %n = graph.neg %x : tensor<4x4xf32>
    %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    %0 = graph.linear %n, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %1 = graph.exp %0 : tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
}

// -----

module {
  // expected-error @+1 {{--pp-split 'nowhere': no op of the program computes an ONNX node of that name}}
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", splits = ["nowhere"], virtual_stages = 1 : i64}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 16 : i64} : tensor<4xf32>
    %0 = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"Mul">["n0"("m.onnx":0:0)])
    %1 = graph.exp %0 : tensor<4xf32> loc(fused<"Exp">["e0"("m.onnx":0:0)])
    return %1 : tensor<4xf32>
  }
}

// -----

module {
  // expected-error @+1 {{--pp-split 'e0': the program ends there; no stage would follow the cut}}
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", splits = ["e0"], virtual_stages = 1 : i64}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 16 : i64} : tensor<4xf32>
    %0 = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(fused<"Mul">["n0"("m.onnx":0:0)])
    %1 = graph.exp %0 : tensor<4xf32> loc(fused<"Exp">["e0"("m.onnx":0:0)])
    return %1 : tensor<4xf32>
  }
}

// -----

// Each stage must hold its weights: two 64 KiB weights, 40 KB a stage.
module {
  // expected-error @+1 {{stage 1 (ONNX nodes 'l1' to 'l1') needs 70.00 KiB (weights 64.00 KiB, activations of 1 micro-batch in flight 6.00 KiB) but a stage may hold 39.06 KiB in the best cut of 2 stages; give more stages or devices}}
  dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
  func.func @main(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
    %w0 = graph.weight "w0" {file = "w.bin", offset = 0 : i64, size = 65536 : i64} : tensor<128x128xf32>
    %h0 = graph.linear %x, %w0 : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32> loc(fused<"MatMul">["l0"("m.onnx":0:0)])
    %w1 = graph.weight "w1" {file = "w.bin", offset = 65536 : i64, size = 65536 : i64} : tensor<128x128xf32>
    %h1 = graph.linear %h0, %w1 : (tensor<4x128xf32>, tensor<128x128xf32>) -> tensor<4x128xf32> loc(fused<"MatMul">["l1"("m.onnx":0:0)])
    return %h1 : tensor<4x128xf32>
  }
}

// -----

// expected-error @+1 {{expects one program to cut into stages, found 2 functions}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{the module is already cut into stages (functions with dist.stage); give the program before the cut (--emit=graph)}}
dist.pipeline {microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
func.func @stage0(%x: tensor<4xf32>) attributes {dist.stage = 0 : i64} {
  return
}
