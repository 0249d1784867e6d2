// RUN: shardc-opt %s --split-input-file --shardc-defer-result-gathers | FileCheck %s

// A result gathered over dp then tp: the dp gather goes, the tp gather is
// rebuilt on the dp piece, and the result says what the runtime gathers.
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @main
  // CHECK-SAME: -> (tensor<2x8xf32> {dist.gather_axes = ["dp"], dist.gather_dim = 0 : i64, graph.name = "logits"})
  func.func @main(%x: tensor<2x4xf32>) -> (tensor<4x8xf32> {graph.name = "logits"}) {
    // CHECK-NEXT: %[[T:.*]] = dist.all_gather %{{.*}} on @mesh ["tp"] dim = 1 : tensor<2x4xf32> -> tensor<2x8xf32>
    // CHECK-NEXT: return %[[T]]
    %g = dist.all_gather %x on @mesh ["dp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
    %t = dist.all_gather %g on @mesh ["tp"] dim = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
    return %t : tensor<4x8xf32>
  }
}

// -----

// dp and ep lead the batch dim's split, tp follows: the gather keeps tp alone.
module {
  dist.mesh @mesh = <["dp"=2, "ep"=2, "tp"=2]>
  // CHECK-LABEL: func.func @main
  // CHECK-SAME: -> (tensor<2x3xf32> {dist.gather_axes = ["dp", "ep"], dist.gather_dim = 0 : i64})
  func.func @main(%x: tensor<1x3xf32>) -> tensor<8x3xf32> {
    // CHECK-NEXT: %[[T:.*]] = dist.all_gather %{{.*}} on @mesh ["tp"] dim = 0 : tensor<1x3xf32> -> tensor<2x3xf32>
    // CHECK-NEXT: return %[[T]]
    %g = dist.all_gather %x on @mesh ["dp", "ep", "tp"] dim = 0 : tensor<1x3xf32> -> tensor<8x3xf32>
    return %g : tensor<8x3xf32>
  }
}

// -----

// Left as they are: a gather whose batch axis follows tp (the pieces would
// interleave), a gathered value the program also uses, and a result no
// gather makes (a partial sum reduced, or a value held whole).
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @main
  // CHECK-SAME: -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  // CHECK-NOT: dist.gather_axes
  func.func @main(%x: tensor<1x4xf32>, %y: tensor<2x4xf32>, %z: tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
    // CHECK: dist.all_gather %{{.*}} on @mesh ["tp", "dp"] dim = 0
    %a = dist.all_gather %x on @mesh ["tp", "dp"] dim = 0 : tensor<1x4xf32> -> tensor<4x4xf32>
    // CHECK: dist.all_gather %{{.*}} on @mesh ["dp"] dim = 0
    %b = dist.all_gather %y on @mesh ["dp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
    %c = graph.add %b, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    // CHECK: dist.all_reduce
    %r = dist.all_reduce %z on @mesh ["dp"] : tensor<2x4xf32>
    return %a, %c, %r, %y : tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
}

// -----

// dim 0 split [tp, dp]: dp, the minor axis, is gathered first and tp after
// it along the same dim, so dp does not lead the dim: both stay.
module {
  dist.mesh @mesh = <["dp"=2, "tp"=2]>
  // CHECK-LABEL: func.func @main
  // CHECK-SAME: -> tensor<4x4xf32>
  // CHECK-NOT: dist.gather_axes
  func.func @main(%x: tensor<1x4xf32>) -> tensor<4x4xf32> {
    // CHECK: dist.all_gather %{{.*}} on @mesh ["dp"] dim = 0
    // CHECK: dist.all_gather %{{.*}} on @mesh ["tp"] dim = 0
    %g = dist.all_gather %x on @mesh ["dp"] dim = 0 : tensor<1x4xf32> -> tensor<2x4xf32>
    %t = dist.all_gather %g on @mesh ["tp"] dim = 0 : tensor<2x4xf32> -> tensor<4x4xf32>
    return %t : tensor<4x4xf32>
  }
}
