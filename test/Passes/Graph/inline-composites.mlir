// RUN: shardc-opt %s --shardc-inline-composites | FileCheck %s

// Nested composites (an expert inside a MoE) are inlined, inner first; the
// results are the bodies' yielded values.
// CHECK-LABEL: func.func @nested
// CHECK-NOT: graph.composite
// CHECK: %[[G:.*]] = graph.gelu %arg0
// CHECK: %[[E:.*]] = graph.exp %[[G]]
// CHECK: return %[[E]]
func.func @nested(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = graph.composite "moe"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    %1 = graph.composite "mlp"(%a) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
    ^bb0(%b: tensor<2x8xf32>):
      %g = graph.gelu %b : tensor<2x8xf32>
      graph.yield %g : tensor<2x8xf32>
    }
    %e = graph.exp %1 : tensor<2x8xf32>
    graph.yield %e : tensor<2x8xf32>
  }
  return %0 : tensor<2x8xf32>
}
