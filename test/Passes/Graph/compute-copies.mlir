// RUN: shardc-opt %s --split-input-file --verify-diagnostics --shardc-compute-copies | FileCheck %s

// A bf16 step's master (fp32, graph.compute_type) read through casts by the
// forward and the backward: both casts become reads of its copy, a bf16
// weight of its own (NAME.bf16, the master's bytes converted); after the
// master's write the update casts the new master into the copy. The cast the
// update itself makes of the master stays; so does a frozen weight's cast.
module {
  // CHECK-LABEL: func.func @step
  func.func @step(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
    // CHECK: %[[W:.*]] = graph.weight "w" {file = "m.bin", graph.compute_type = bf16, graph.train = "param", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    // CHECK-NEXT: %[[C:.*]] = graph.weight "w.bf16" {file = "m.bin", graph.train = "copy", offset = 0 : i64, size = 64 : i64, stored_type = f32} : tensor<4x4xbf16>
    %w = graph.weight "w" {file = "m.bin", graph.compute_type = bf16, graph.train = "param", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    // CHECK: %[[F:.*]] = graph.weight "frozen"
    %f = graph.weight "frozen" {file = "m.bin", offset = 64 : i64, size = 64 : i64} : tensor<4x4xf32>
    // CHECK: %[[FC:.*]] = graph.cast %[[F]]
    %fc = graph.cast %f {graph.phase = "forward"} : tensor<4x4xf32> to tensor<4x4xbf16>
    // CHECK-NOT: graph.cast %[[W]] {graph.phase = "forward"}
    // CHECK: %[[Y:.*]] = graph.matmul %{{.*}}, %[[C]] {graph.phase = "forward"}
    %wf = graph.cast %w {graph.phase = "forward"} : tensor<4x4xf32> to tensor<4x4xbf16>
    %y = graph.matmul %x, %wf {graph.phase = "forward"} : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
    %z = graph.matmul %y, %fc {graph.phase = "forward"} : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
    // CHECK: graph.transpose %[[C]] {graph.phase = "backward"
    %wb = graph.cast %w {graph.phase = "backward"} : tensor<4x4xf32> to tensor<4x4xbf16>
    %wt = graph.transpose %wb {graph.phase = "backward", perm = array<i64: 1, 0>} : (tensor<4x4xbf16>) -> tensor<4x4xbf16>
    %dx = graph.matmul %z, %wt {graph.phase = "backward"} : (tensor<2x4xbf16>, tensor<4x4xbf16>) -> tensor<2x4xbf16>
    %xt = graph.transpose %x {graph.phase = "backward", perm = array<i64: 1, 0>} : (tensor<2x4xbf16>) -> tensor<4x2xbf16>
    %gb = graph.matmul %xt, %z {graph.phase = "backward"} : (tensor<4x2xbf16>, tensor<2x4xbf16>) -> tensor<4x4xbf16>
    %g = graph.cast %gb {graph.phase = "backward"} : tensor<4x4xbf16> to tensor<4x4xf32>
    // The update reads the master; a cast it makes of it is its own.
    // CHECK: %[[NEW:.*]] = graph.sub %[[W]], %{{.*}} {graph.phase = "optimizer"}
    %new = graph.sub %w, %g {graph.phase = "optimizer"} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    // CHECK: graph.cast %[[W]] {graph.phase = "optimizer"}
    %probe = graph.cast %w {graph.phase = "optimizer"} : tensor<4x4xf32> to tensor<4x4xbf16>
    // CHECK: graph.assign %[[W]], %[[NEW]]
    // CHECK-NEXT: %[[R:.*]] = graph.cast %[[NEW]] {graph.phase = "optimizer"} : tensor<4x4xf32> to tensor<4x4xbf16>
    // CHECK-NEXT: graph.assign %[[C]], %[[R]] {graph.phase = "optimizer"}
    graph.assign %w, %new {graph.phase = "optimizer"} : tensor<4x4xf32>
    return %dx : tensor<2x4xbf16>
  }
}

// -----

// A master that is written twice has no one value to copy.
module {
  func.func @twice(%g: tensor<4xf32>) {
    // expected-error @+1 {{is a trained master written 2 times; expected once}}
    %w = graph.weight "w" {file = "m.bin", graph.compute_type = bf16, graph.train = "param", offset = 0 : i64, size = 16 : i64} : tensor<4xf32>
    graph.assign %w, %g : tensor<4xf32>
    graph.assign %w, %g : tensor<4xf32>
    return
  }
}
