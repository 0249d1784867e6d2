// RUN: shardc-opt %s --split-input-file --shardc-partition --verify-diagnostics

// A whole value cannot become a partial sum by communication.
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @partial_from_whole(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = graph.neg %x : tensor<4x8xf32>
    // expected-error @+1 {{cannot make a partial sum from a complete value}}
    %1 = dist.reshard %0 to <@mesh, [{}, {}], partial={"tp"}> : tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
}

// -----

// Two meshes: which one the program runs on is ambiguous.
// expected-error @+1 {{expected at most one dist.mesh, got 2}}
module {
  dist.mesh @a = <["tp"=2]>
  dist.mesh @b = <["tp"=4]>
}
