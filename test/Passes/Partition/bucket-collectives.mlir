// RUN: shardc-opt %s --split-input-file --shardc-bucket-collectives | FileCheck %s
// RUN: shardc-opt %s --split-input-file --shardc-bucket-collectives="bucket-mb=1" | FileCheck %s --check-prefix=LIMIT
// RUN: shardc-opt %s --split-input-file --shardc-bucket-collectives="bucket-mb=0" | FileCheck %s --check-prefix=OFF

// Three gradients' sums: one all-reduce of their flat concatenation, placed
// after the last gradient is computed (%g3) and before the first sum is read
// (%u1), then split and reshaped back. The loss's sum (forward) and the
// gradient norm's (the update's own) are no gradient's: left alone.
// OFF-LABEL: func.func @sums
// OFF-NOT: dist.bucket
module {
  dist.mesh @mesh = <["dp"=2]>
  // CHECK-LABEL: func.func @sums
  func.func @sums(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
    // CHECK: %[[LOSS:.*]] = dist.all_reduce %{{.*}} on @mesh ["dp"] : tensor<f32>
    // CHECK-NOT: dist.bucket
    %l = graph.reduce_sum %x {axes = array<i64: 0, 1>, graph.phase = "forward", keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %loss = dist.all_reduce %l on @mesh ["dp"] : tensor<f32>
    // CHECK: %[[G1:.*]] = graph.mul %{{.*}} {graph.phase = "backward"} : (tensor<4x8xf32>
    // CHECK-NEXT: %[[G2:.*]] = graph.mul %{{.*}} {graph.phase = "backward"} : (tensor<8xf32>
    %g1 = graph.mul %x, %x {graph.phase = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %g2 = graph.mul %b, %b {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %s1 = dist.all_reduce %g1 on @mesh ["dp"] : tensor<4x8xf32>
    %s2 = dist.all_reduce %g2 on @mesh ["dp"] : tensor<8xf32>
    // CHECK: %[[G3:.*]] = graph.add %{{.*}} {graph.phase = "backward"} : (tensor<8xf32>
    // CHECK-NEXT: %[[F1:.*]] = graph.reshape %[[G1]] : (tensor<4x8xf32>) -> tensor<32xf32>
    // CHECK-NEXT: %[[C:.*]] = graph.concat %[[F1]], %[[G2]], %[[G3]] {axis = 0 : i64} : (tensor<32xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<48xf32>
    // CHECK-NEXT: %[[S:.*]] = dist.all_reduce %[[C]] on @mesh ["dp"] {dist.bucket = 3 : i64} : tensor<48xf32>
    // CHECK-NEXT: %[[P:.*]]:3 = graph.split %[[S]] {axis = 0 : i64, sizes = array<i64: 32, 8, 8>}
    // CHECK-NEXT: %[[S1:.*]] = graph.reshape %[[P]]#0 : (tensor<32xf32>) -> tensor<4x8xf32>
    // CHECK-NEXT: graph.mul %[[S1]], %[[S1]] {graph.phase = "optimizer"}
    // CHECK: graph.add %[[P]]#1, %[[P]]#2 {graph.phase = "optimizer"}
    %g3 = graph.add %b, %b {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %u1 = graph.mul %s1, %s1 {graph.phase = "optimizer"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %s3 = dist.all_reduce %g3 on @mesh ["dp"] : tensor<8xf32>
    %n1 = graph.reduce_sum %u1 {axes = array<i64: 0, 1>, graph.phase = "optimizer", keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    %u2 = graph.add %s2, %s3 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %n2 = graph.reduce_sum %u2 {axes = array<i64: 0>, graph.phase = "optimizer", keepdims = false} : (tensor<8xf32>) -> tensor<f32>
    %n = graph.add %n1, %n2 {graph.phase = "optimizer"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
    // CHECK: dist.all_reduce %{{.*}} on @mesh ["dp"] : tensor<f32>
    // CHECK-NOT: dist.all_reduce
    // CHECK: return
    %norm = dist.all_reduce %n on @mesh ["dp"] : tensor<f32>
    return %loss, %norm : tensor<f32>, tensor<f32>
  }
}

// -----

// The limit: four sums of 512 KiB each. 25 MiB takes them in one bucket; at
// 1 MiB the first two fill a bucket, the next two another.
// CHECK-LABEL: func.func @limit
// CHECK: dist.all_reduce %{{.*}} {dist.bucket = 4 : i64} : tensor<524288xf32>
// CHECK-NOT: dist.all_reduce
// LIMIT-LABEL: func.func @limit
// LIMIT: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<262144xf32>
// LIMIT-NEXT: dist.all_reduce %{{.*}} {dist.bucket = 2 : i64} : tensor<262144xf32>
// LIMIT: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<262144xf32>
// LIMIT-NEXT: dist.all_reduce %{{.*}} {dist.bucket = 2 : i64} : tensor<262144xf32>
// LIMIT-NOT: dist.all_reduce
// LIMIT: return
module {
  dist.mesh @mesh = <["dp"=2]>
  func.func @limit(%x: tensor<131072xf32>) -> (tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>) {
    %g1 = graph.mul %x, %x {graph.phase = "backward"} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<131072xf32>
    %g2 = graph.add %x, %x {graph.phase = "backward"} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<131072xf32>
    %g3 = graph.sub %x, %x {graph.phase = "backward"} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<131072xf32>
    %g4 = graph.div %x, %x {graph.phase = "backward"} : (tensor<131072xf32>, tensor<131072xf32>) -> tensor<131072xf32>
    %s1 = dist.all_reduce %g1 on @mesh ["dp"] : tensor<131072xf32>
    %s2 = dist.all_reduce %g2 on @mesh ["dp"] : tensor<131072xf32>
    %s3 = dist.all_reduce %g3 on @mesh ["dp"] : tensor<131072xf32>
    %s4 = dist.all_reduce %g4 on @mesh ["dp"] : tensor<131072xf32>
    %u1 = graph.neg %s1 {graph.phase = "optimizer"} : tensor<131072xf32>
    %u2 = graph.neg %s2 {graph.phase = "optimizer"} : tensor<131072xf32>
    %u3 = graph.neg %s3 {graph.phase = "optimizer"} : tensor<131072xf32>
    %u4 = graph.neg %s4 {graph.phase = "optimizer"} : tensor<131072xf32>
    return %u1, %u2, %u3, %u4 : tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>, tensor<131072xf32>
  }
}

// -----

// Kinds, groups and types are not mixed: reduce-scatters apart from
// all-reduces, the tp sums apart from the dp ones, bf16 apart from f32.
// A reduce-scatter's rows are the ranks' blocks ([2, n/2]) side by side:
// one along dim 1 of [1, 4, 6] takes part (its blocks are contiguous), one
// along dim 1 of [4, 6] would interleave them and stays alone.
// CHECK-LABEL: func.func @kinds
// CHECK-DAG: %[[RS:.*]] = dist.reduce_scatter %{{.*}} on @mesh ["dp"] dim = 0 {dist.bucket = 2 : i64} : tensor<2x28xf32> -> tensor<1x28xf32>
// CHECK-DAG: dist.all_reduce %{{.*}} on @mesh ["dp"] {dist.bucket = 2 : i64} : tensor<16xf32>
// CHECK-DAG: dist.all_reduce %{{.*}} on @mesh ["tp"] {dist.bucket = 2 : i64} : tensor<16xf32>
// CHECK-DAG: dist.all_reduce %{{.*}} on @mesh ["dp"] {dist.bucket = 2 : i64} : tensor<16xbf16>
// CHECK-DAG: dist.reduce_scatter %{{.*}} on @mesh ["dp"] dim = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
// CHECK-DAG: graph.split %[[RS]] {axis = 1 : i64, sizes = array<i64: 16, 12>} : (tensor<1x28xf32>) -> (tensor<1x16xf32>, tensor<1x12xf32>)
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  func.func @kinds(%x: tensor<8xf32>, %y: tensor<8xbf16>, %m: tensor<4x8xf32>, %n: tensor<1x4x6xf32>, %w: tensor<4x6xf32>) -> (tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<2x8xf32>, tensor<1x2x6xf32>, tensor<4x3xf32>) {
    %a = graph.mul %x, %x {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %b = graph.mul %y, %y {graph.phase = "backward"} : (tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>
    %c = graph.mul %m, %m {graph.phase = "backward"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %d = graph.mul %n, %n {graph.phase = "backward"} : (tensor<1x4x6xf32>, tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
    %e = graph.mul %w, %w {graph.phase = "backward"} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %s1 = dist.all_reduce %a on @mesh ["dp"] : tensor<8xf32>
    %s2 = dist.all_reduce %b on @mesh ["dp"] : tensor<8xbf16>
    %s3 = dist.all_reduce %a on @mesh ["tp"] : tensor<8xf32>
    %r1 = dist.reduce_scatter %c on @mesh ["dp"] dim = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
    %s4 = dist.all_reduce %a on @mesh ["dp"] : tensor<8xf32>
    %r2 = dist.reduce_scatter %d on @mesh ["dp"] dim = 1 : tensor<1x4x6xf32> -> tensor<1x2x6xf32>
    %s5 = dist.all_reduce %b on @mesh ["dp"] : tensor<8xbf16>
    %s6 = dist.all_reduce %a on @mesh ["tp"] : tensor<8xf32>
    %r3 = dist.reduce_scatter %e on @mesh ["dp"] dim = 1 : tensor<4x6xf32> -> tensor<4x3xf32>
    %u1 = graph.add %s1, %s4 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %u2 = graph.add %s2, %s5 {graph.phase = "optimizer"} : (tensor<8xbf16>, tensor<8xbf16>) -> tensor<8xbf16>
    %u3 = graph.add %s3, %s6 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %u4 = graph.neg %r1 {graph.phase = "optimizer"} : tensor<2x8xf32>
    %u5 = graph.neg %r2 {graph.phase = "optimizer"} : tensor<1x2x6xf32>
    %u6 = graph.neg %r3 {graph.phase = "optimizer"} : tensor<4x3xf32>
    return %u1, %u2, %u3, %u4, %u5, %u6 : tensor<8xf32>, tensor<8xbf16>, tensor<8xf32>, tensor<2x8xf32>, tensor<1x2x6xf32>, tensor<4x3xf32>
  }
}

// -----

// Order: the first sum is read (%u1) before the third gradient is computed,
// so the third cannot join the first two; it starts a bucket of its own
// (one member: left as it was). Micro-batch accumulation's adds into an
// accumulator count as the update's reads.
// CHECK-LABEL: func.func @order
// CHECK: %[[S:.*]] = dist.all_reduce %{{.*}} {dist.bucket = 2 : i64} : tensor<16xf32>
// CHECK: graph.add %[[ACC:.*]], %{{.*}} : (tensor<8xf32>, tensor<8xf32>)
// CHECK: graph.mul %{{.*}} {graph.phase = "backward"}
// CHECK-NEXT: dist.all_reduce %{{.*}} on @mesh ["dp"] : tensor<8xf32>
module {
  dist.mesh @mesh = <["dp"=2]>
  func.func @order(%x: tensor<8xf32>) -> tensor<8xf32> {
    %acc = graph.weight "microbatch_sum.0" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 32 : i64} : tensor<8xf32>
    %g1 = graph.mul %x, %x {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %s1 = dist.all_reduce %g1 on @mesh ["dp"] : tensor<8xf32>
    %g2 = graph.add %x, %x {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %s2 = dist.all_reduce %g2 on @mesh ["dp"] : tensor<8xf32>
    %u1 = graph.add %acc, %s1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    graph.assign %acc, %u1 : tensor<8xf32>
    %g3 = graph.mul %g2, %x {graph.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %s3 = dist.all_reduce %g3 on @mesh ["dp"] : tensor<8xf32>
    %u = graph.add %s2, %s3 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %u : tensor<8xf32>
  }
}

// -----

// ZeRO's gathers of the new weights: each rank's slice is one row ([1, n]),
// the bucket's rows are the ranks' slices side by side, placed after the
// last slice is computed and before the first write. A weight's forward
// gather (ZeRO-3) is no update's: left alone.
// CHECK-LABEL: func.func @gathers
// CHECK: dist.all_gather %{{.*}} on @mesh ["dp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
// CHECK: %[[N2:.*]] = graph.neg %{{.*}} {graph.phase = "optimizer"} : tensor<2xf32>
// CHECK-NEXT: graph.reshape %{{.*}} : (tensor<2x4xf32>) -> tensor<1x8xf32>
// CHECK-NEXT: graph.reshape %[[N2]] : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT: %[[C:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x8xf32>, tensor<1x2xf32>) -> tensor<1x10xf32>
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %[[C]] on @mesh ["dp"] dim = 0 {dist.bucket = 2 : i64} : tensor<1x10xf32> -> tensor<2x10xf32>
// CHECK-NEXT: %[[P:.*]]:2 = graph.split %[[G]] {axis = 1 : i64, sizes = array<i64: 8, 2>} : (tensor<2x10xf32>) -> (tensor<2x8xf32>, tensor<2x2xf32>)
// CHECK-NEXT: %[[W1:.*]] = graph.reshape %[[P]]#0 : (tensor<2x8xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[W2:.*]] = graph.reshape %[[P]]#1 : (tensor<2x2xf32>) -> tensor<4xf32>
// CHECK-NEXT: graph.assign %{{.*}}, %[[W1]]
// CHECK-NEXT: graph.assign %{{.*}}, %[[W2]]
module {
  dist.mesh @mesh = <["dp"=2]>
  func.func @gathers(%x: tensor<2x4xf32>) -> tensor<8xf32> {
    %w1 = graph.weight "w1" {file = "", graph.train = "state", offset = 0 : i64, size = 64 : i64} : tensor<4x4xf32>
    %w2 = graph.weight "w2" {file = "", graph.train = "state", offset = 0 : i64, size = 16 : i64} : tensor<4xf32>
    %w3 = graph.weight "w3" {file = "", graph.train = "state", offset = 0 : i64, size = 16 : i64} : tensor<4xf32>
    %f = dist.all_gather %w3 on @mesh ["dp"] dim = 0 : tensor<4xf32> -> tensor<8xf32>
    %y = graph.neg %f {graph.phase = "forward"} : tensor<8xf32>
    %n1 = graph.neg %x {graph.phase = "optimizer"} : tensor<2x4xf32>
    %a1 = dist.all_gather %n1 on @mesh ["dp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
    %s = graph.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1, 2>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<1x2xf32>
    %r = graph.reshape %s : (tensor<1x2xf32>) -> tensor<2xf32>
    %n2 = graph.neg %r {graph.phase = "optimizer"} : tensor<2xf32>
    %a2 = dist.all_gather %n2 on @mesh ["dp"] dim = 0 : tensor<2xf32> -> tensor<4xf32>
    graph.assign %w1, %a1 {graph.phase = "optimizer"} : tensor<4x4xf32>
    graph.assign %w2, %a2 {graph.phase = "optimizer"} : tensor<4xf32>
    return %y : tensor<8xf32>
  }
}

// -----

// Micro-batches' sums over dp, once after the loop: each reads its
// accumulator (storage), ready after its last write and until its next. The
// second's graph.weight stands after the first sum's reader: it is moved up
// to the bucket; the third's accumulator is written again before the
// bucket's place could be (%w), so it stays alone.
// CHECK-LABEL: func.func @accumulators
// CHECK: %[[A1:.*]] = graph.weight "microbatch_sum.1"
// CHECK: %[[A2:.*]] = graph.weight "microbatch_sum.2"
// CHECK-NEXT: %[[C:.*]] = graph.concat %[[A1]], %[[A2]] {axis = 0 : i64}
// CHECK-NEXT: dist.all_reduce %[[C]] on @mesh ["dp"] {dist.bucket = 2 : i64} : tensor<16xf32>
// CHECK: graph.assign %{{.*}}, %{{.*}} : tensor<8xf32>
// CHECK-NEXT: dist.all_reduce %{{.*}} on @mesh ["dp"] : tensor<8xf32>
module {
  dist.mesh @mesh = <["dp"=2]>
  func.func @accumulators(%x: tensor<8xf32>) -> tensor<8xf32> {
    %a1 = graph.weight "microbatch_sum.1" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 32 : i64} : tensor<8xf32>
    %a3 = graph.weight "microbatch_sum.3" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 32 : i64} : tensor<8xf32>
    %s1 = dist.all_reduce %a1 on @mesh ["dp"] : tensor<8xf32>
    %u1 = graph.neg %s1 {graph.phase = "optimizer"} : tensor<8xf32>
    %a2 = graph.weight "microbatch_sum.2" {file = "", graph.train = "accumulator", offset = 0 : i64, size = 32 : i64} : tensor<8xf32>
    %s2 = dist.all_reduce %a2 on @mesh ["dp"] : tensor<8xf32>
    %w = graph.mul %x, %x {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    graph.assign %a3, %w : tensor<8xf32>
    %s3 = dist.all_reduce %a3 on @mesh ["dp"] : tensor<8xf32>
    %u = graph.add %s2, %s3 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %v = graph.add %u, %u1 {graph.phase = "optimizer"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %v : tensor<8xf32>
  }
}
