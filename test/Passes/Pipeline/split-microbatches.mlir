// RUN: shardc-opt %s --split-input-file --shardc-split-microbatches | FileCheck %s

// The batch was split over mb and dp: the stage takes one micro-batch (the
// runtime slices it along dim 0) and splits it over dp alone; the output is
// gathered over dp alone (the runtime concatenates the micro-batches). An
// input without a batch stays whole. mb leaves the mesh.
module {
  // CHECK: dist.mesh @mesh = <["dp"=2, "tp"=2]>
  dist.mesh @mesh = <["mb"=2, "dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @stage0
  // CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32> {dist.microbatch_dim = 0 : i64, graph.name = "x"}, %[[P:.*]]: tensor<1x4xf32> {graph.name = "pos"})
  // CHECK-SAME: -> (tensor<4x4xf32> {dist.microbatch_dim = 0 : i64, graph.name = "y"})
  func.func @stage0(%x: tensor<8x4xf32> {graph.name = "x"}, %p: tensor<1x4xf32> {graph.name = "pos"}) -> (tensor<8x4xf32> {graph.name = "y"}) attributes {dist.stage = 0 : i64} {
    // CHECK: %[[S:.*]] = dist.all_slice %[[X]] on @mesh ["dp"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
    %s = dist.all_slice %x on @mesh ["mb", "dp"] dim = 0 : tensor<8x4xf32> -> tensor<2x4xf32>
    // CHECK: %[[A:.*]] = graph.add %[[S]], %[[P]]
    %a = graph.add %s, %p : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
    // CHECK: %[[G:.*]] = dist.all_gather %[[A]] on @mesh ["dp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
    %g = dist.all_gather %a on @mesh ["mb", "dp"] dim = 0 : tensor<2x4xf32> -> tensor<8x4xf32>
    // CHECK: return %[[G]]
    return %g : tensor<8x4xf32>
  }
}

// -----

// Gathers that make a result whole, one per dim: the one over mb goes, the
// later ones are rebuilt on the micro-batch.
module {
  // CHECK: dist.mesh @mesh = <["tp"=2]>
  dist.mesh @mesh = <["mb"=2, "tp"=2]>
  // CHECK-LABEL: func.func @stage1
  // CHECK-SAME: (%[[R:.*]]: tensor<1x2xf32>) -> (tensor<1x4xf32> {dist.microbatch_dim = 0 : i64})
  func.func @stage1(%r: tensor<1x2xf32>) -> tensor<2x4xf32> attributes {dist.stage = 1 : i64} {
    // CHECK-NEXT: %[[T:.*]] = dist.all_gather %[[R]] on @mesh ["tp"] dim = 1 : tensor<1x2xf32> -> tensor<1x4xf32>
    %g = dist.all_gather %r on @mesh ["mb"] dim = 0 : tensor<1x2xf32> -> tensor<2x2xf32>
    %t = dist.all_gather %g on @mesh ["tp"] dim = 1 : tensor<2x2xf32> -> tensor<2x4xf32>
    // CHECK-NEXT: return %[[T]]
    return %t : tensor<2x4xf32>
  }
}

// -----

// An input also read whole stays whole: each run gets the whole batch, and
// the slice keeps micro-batch m's rows by the index the runtime gives (the
// last argument): rows m * 2 + [0, 1].
module {
  dist.mesh @mesh = <["mb"=2]>
  // CHECK-LABEL: func.func @whole_and_sliced
  // CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>, %[[M:.*]]: tensor<1xi64> {dist.microbatch_index, graph.name = "microbatch"}) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  func.func @whole_and_sliced(%x: tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>) attributes {dist.stage = 0 : i64} {
    // CHECK-DAG: %[[FIRST:.*]] = graph.constant dense<[0, 1]> : tensor<2xi64>
    // CHECK-DAG: %[[SHARE:.*]] = graph.constant dense<2> : tensor<1xi64>
    // CHECK: %[[OFFSET:.*]] = graph.mul %[[M]], %[[SHARE]]
    // CHECK: %[[ROWS:.*]] = graph.add %[[FIRST]], %[[OFFSET]]
    // CHECK: %[[PIECE:.*]] = graph.gather %[[X]], %[[ROWS]] {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
    %s = dist.all_slice %x on @mesh ["mb"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
    // CHECK: graph.exp %[[PIECE]]
    %e = graph.exp %s : tensor<2x4xf32>
    %n = graph.neg %x : tensor<4x4xf32>
    return %e, %n : tensor<2x4xf32>, tensor<4x4xf32>
  }
}

// -----

// The runtime gives an input the same shape in every stage: read whole by
// stage 1, it stays whole in stage 0 too, which keeps its rows by index.
module {
  dist.mesh @mesh = <["mb"=2]>
  // CHECK-LABEL: func.func @stage0
  // CHECK-SAME: (%[[IDS:.*]]: tensor<4x4xf32> {graph.name = "ids"}, %[[M:.*]]: tensor<1xi64> {dist.microbatch_index, graph.name = "microbatch"})
  // CHECK: graph.gather %[[IDS]]
  func.func @stage0(%ids: tensor<4x4xf32> {graph.name = "ids"}) -> tensor<2x4xf32> attributes {dist.stage = 0 : i64} {
    %s = dist.all_slice %ids on @mesh ["mb"] dim = 0 : tensor<4x4xf32> -> tensor<2x4xf32>
    return %s : tensor<2x4xf32>
  }
  // CHECK-LABEL: func.func @stage1
  // CHECK-SAME: (%{{.*}}: tensor<4x4xf32> {graph.name = "ids"})
  func.func @stage1(%ids: tensor<4x4xf32> {graph.name = "ids"}) -> tensor<4x4xf32> attributes {dist.stage = 1 : i64} {
    %n = graph.neg %ids : tensor<4x4xf32>
    return %n : tensor<4x4xf32>
  }
}

// -----

// A constant whose micro-batches' rows are alike (a position table repeated
// for each row of the batch; a splat) is sliced at compile time, then over
// the other axes; one whose rows differ keeps them by the index.
module {
  dist.mesh @mesh = <["mb"=2, "tp"=2]>
  // CHECK-LABEL: func.func @stage0
  // CHECK-SAME: (%[[M:.*]]: tensor<1xi64> {dist.microbatch_index, graph.name = "microbatch"})
  func.func @stage0() -> (tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>) attributes {dist.stage = 0 : i64} {
    // CHECK-DAG: %[[ALIKE:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
    // CHECK-DAG: dist.all_slice %[[ALIKE]] on @mesh ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<1x2xf32>
    %rows = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]> : tensor<4x2xf32>
    %a = dist.all_slice %rows on @mesh ["mb", "tp"] dim = 0 : tensor<4x2xf32> -> tensor<1x2xf32>
    // CHECK-DAG: %[[SPLAT:.*]] = graph.constant dense<5.000000e-01> : tensor<2x2xf32>
    // CHECK-DAG: dist.all_slice %[[SPLAT]] on @mesh ["tp"] dim = 0 : tensor<2x2xf32> -> tensor<1x2xf32>
    %half = graph.constant dense<0.5> : tensor<4x2xf32>
    %b = dist.all_slice %half on @mesh ["mb", "tp"] dim = 0 : tensor<4x2xf32> -> tensor<1x2xf32>
    // CHECK-DAG: %[[DIFFER:.*]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00], [1.000000e+00, 2.000000e+00], [5.000000e+00, 6.000000e+00]]> : tensor<4x2xf32>
    // CHECK-DAG: graph.gather %[[DIFFER]], %{{.*}} {axis = 0 : i64} : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
    %differ = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [5.0, 6.0]]> : tensor<4x2xf32>
    %c = dist.all_slice %differ on @mesh ["mb"] dim = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
    return %a, %b, %c : tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>
  }
}

// -----

// Without mb nothing changes.
// CHECK: dist.mesh @mesh = <["dp"=2]>
// CHECK: dist.all_slice %{{.*}} on @mesh ["dp"]
dist.mesh @mesh = <["dp"=2]>
func.func @main(%x: tensor<4xf32>) -> tensor<2xf32> {
  %s = dist.all_slice %x on @mesh ["dp"] dim = 0 : tensor<4xf32> -> tensor<2xf32>
  return %s : tensor<2xf32>
}
