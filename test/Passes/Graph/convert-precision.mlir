// RUN: shardc-opt %s --split-input-file --shardc-convert-precision | FileCheck %s
// RUN: shardc-opt %s --split-input-file --shardc-convert-precision="dtype=f16" | FileCheck %s --check-prefix=F16

// Every float32 value is stored as bf16; the signature stays float32, so
// inputs are cast on entry and results back on exit. Weights keep their
// bytes (stored_type = f32, converted when the artifact is written);
// constants are converted now, saturating: float32's lowest stays finite.
// Integer values are untouched.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[IDS:.*]]: tensor<2xi64>) -> tensor<2x8xf32>
// CHECK: %[[XB:.*]] = graph.cast %[[X]] : tensor<2x8xf32> to tensor<2x8xbf16>
// CHECK: %[[W:.*]] = graph.weight "w" {{.*}}stored_type = f32} : tensor<8x8xbf16>
// CHECK: %[[M:.*]] = graph.constant dense<[-3.389{{[0-9]*}}e+38, 1.000000e+00, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<8xbf16>
// CHECK: %[[Y:.*]] = graph.linear %[[XB]], %[[W]] : (tensor<2x8xbf16>, tensor<8x8xbf16>) -> tensor<2x8xbf16>
// CHECK: %[[S:.*]] = graph.add %[[Y]], %[[M]] : (tensor<2x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
// CHECK: graph.gather {{.*}} -> tensor<2x8xbf16>
// CHECK: %[[OUT:.*]] = graph.cast %{{.*}} : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK: return %[[OUT]] : tensor<2x8xf32>
// F16-LABEL: func.func @block
// F16: graph.constant dense<[-6.550400e+04, 1.000000e+00, 5.000000e-01, {{.*}}]> : tensor<8xf16>
// F16: graph.linear {{.*}} -> tensor<2x8xf16>
func.func @block(%x: tensor<2x8xf32>, %ids: tensor<2xi64>) -> tensor<2x8xf32> {
  %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : tensor<8x8xf32>
  %m = graph.constant dense<[-3.4028235e+38, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]> : tensor<8xf32>
  %y = graph.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %s = graph.add %y, %m : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %g = graph.gather %s, %ids {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// Regions convert too: a composite's block arguments and body.
// CHECK-LABEL: func.func @composite
// CHECK: graph.composite "mlp"
// CHECK: ^bb0(%{{.*}}: tensor<2x8xbf16>):
// CHECK: graph.relu %{{.*}} : tensor<2x8xbf16>
func.func @composite(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = graph.composite "mlp"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>):
    %1 = graph.relu %a : tensor<2x8xf32>
    graph.yield %1 : tensor<2x8xf32>
  }
  return %0 : tensor<2x8xf32>
}
