// RUN: shardc-opt %s --split-input-file --shardc-inline-composites --shardc-lower-to-exec | FileCheck %s

// Arguments become inputs, weights and constants stay in the weight file,
// reshapes are views, every other op a kernel writing a fresh arena buffer
// with the op's attributes as parameters and its ONNX node as source.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = exec.input "x" {index = 0 : i64} : memref<2x8xf32>
// CHECK: %[[W:.*]] = exec.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : memref<8x8xf32>
// CHECK: %[[H:.*]] = exec.alloc : memref<2x8xf32>
// CHECK: exec.kernel "linear"(%[[X]], %[[W]]) -> (%[[H]]) {transpose_weight = true} {source = "fc1"}
// CHECK: %[[G:.*]] = exec.alloc : memref<2x8xf32>
// CHECK: exec.kernel "gelu"(%[[H]]) -> (%[[G]]) {approximate_tanh = false} {source = ""}
// CHECK: %[[C:.*]] = exec.constant "constant.0" dense<2.000000e+00> : tensor<f32> : memref<f32>
// CHECK: %[[M:.*]] = exec.alloc : memref<2x8xf32>
// CHECK: exec.kernel "mul"(%[[G]], %[[C]]) -> (%[[M]])
// CHECK: %[[V:.*]] = exec.view %[[M]] : memref<2x8xf32> to memref<16xf32>
// CHECK: exec.output "y" %[[V]] {index = 0 : i64} : memref<16xf32>
// CHECK: return
func.func @main(%x: tensor<2x8xf32> {graph.name = "x"}) -> (tensor<16xf32> {graph.name = "y"}) {
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 256} : tensor<8x8xf32>
  %0 = graph.composite "mlp"(%x, %w) : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<8x8xf32>):
    %h = graph.linear %a, %b {transpose_weight = true} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc(fused<"Gemm">["fc1"("m.onnx":0:0)])
    %g = graph.gelu %h : tensor<2x8xf32>
    graph.yield %g : tensor<2x8xf32>
  }
  %two = graph.constant dense<2.0> : tensor<f32>
  %1 = graph.mul %0, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %2 = graph.reshape %1 : (tensor<2x8xf32>) -> tensor<16xf32>
  return %2 : tensor<16xf32>
}

// -----

// Routed experts (a device of --ep 2 with its 16 tokens and 4 of 8 experts,
// exchanging over ep) run as three steps: dispatch writes the rows its
// experts may receive, sized for the worst case (2 members x 16 tokens x
// min(k = 2, 4 local experts) = 64), and the kept-entry counts [2, 8];
// the experts compute on those rows; combine writes the layer's result.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[Y:.*]] = exec.alloc : memref<16x64xf32>
// CHECK: %[[ROWS:.*]] = exec.alloc : memref<64x64xf32>
// CHECK: %[[ROUTING:.*]] = exec.alloc : memref<2x8xi64>
// CHECK: %[[OUT:.*]] = exec.alloc : memref<64x64xf32>
// CHECK: exec.kernel "moe_dispatch"(%[[X]], %[[I:.*]]) -> (%[[ROWS]], %[[ROUTING]]) {capacity = 0 : i64, exchange = true, experts = 8 : i64, mesh_axes = ["ep"]}
// CHECK: exec.kernel "moe_experts"(%[[ROWS]], %[[ROUTING]], %{{.*}}, %{{.*}}, %{{.*}}) -> (%[[OUT]]) {activation = "silu", capacity = 0 : i64, exchange = true, experts = 8 : i64, gated = true, mesh_axes = ["ep"], transpose_weights = false}
// CHECK: exec.kernel "moe_combine"(%[[OUT]], %[[ROUTING]], %[[I]], %[[G:.*]]) -> (%[[Y]]) {capacity = 0 : i64, exchange = true, experts = 8 : i64, mesh_axes = ["ep"]}
// CHECK: exec.output "y" %[[Y]]
func.func @main(%x: tensor<16x64xf32> {graph.name = "x"}, %i: tensor<16x2xi64> {graph.name = "i"}, %g: tensor<16x2xf32> {graph.name = "g"}) -> (tensor<16x64xf32> {graph.name = "y"}) {
  %gate = graph.weight "gate" {file = "w.bin", offset = 0, size = 131072} : tensor<4x64x128xf32>
  %up = graph.weight "up" {file = "w.bin", offset = 131072, size = 131072} : tensor<4x64x128xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 262144, size = 131072} : tensor<4x128x64xf32>
  %y = graph.moe %x, %i, %g, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu", exchange = true, expert_axes = ["ep"]} : (tensor<16x64xf32>, tensor<16x2xi64>, tensor<16x2xf32>, tensor<4x64x128xf32>, tensor<4x64x128xf32>, tensor<4x128x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// A pipeline stage's functions read one weight file, so a constant or
// untrained weight two of them hold is one tensor there, named alike: a
// constant by its value, a weight by what its bytes are (stored
// transposed, `w` is another tensor). Another stage has a file of its own.
// CHECK-LABEL: func.func @stage0.forward()
// CHECK: exec.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : memref<8x8xf32>
// CHECK: exec.constant "constant.0" dense<2.000000e+00>
// CHECK-LABEL: func.func @stage0.backward_input()
// CHECK: exec.constant "constant.1" dense<3.000000e+00>
// CHECK: exec.constant "constant.0" dense<2.000000e+00>
// CHECK: exec.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : memref<8x8xf32>
// CHECK: exec.weight "w#1" {file = "m.onnx", graph.transposed, offset = 0 : i64, size = 256 : i64} : memref<8x8xf32>
// CHECK-LABEL: func.func @stage1.forward()
// CHECK: exec.constant "constant.0" dense<3.000000e+00>
// CHECK: exec.weight "w" {file = "m.onnx", graph.transposed
func.func @stage0.forward(%x: tensor<8x8xf32> {graph.name = "x"}) -> (tensor<8x8xf32> {graph.name = "y"}) attributes {dist.stage = 0 : i64} {
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 256} : tensor<8x8xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %0 = graph.add %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = graph.mul %0, %two : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
func.func @stage0.backward_input(%x: tensor<8x8xf32> {graph.name = "x"}) -> (tensor<8x8xf32> {graph.name = "y"}) attributes {dist.stage = 0 : i64} {
  %three = graph.constant dense<3.0> : tensor<f32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 256} : tensor<8x8xf32>
  %wt = graph.weight "w" {file = "m.onnx", offset = 0, size = 256, graph.transposed} : tensor<8x8xf32>
  %0 = graph.mul %x, %three : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %1 = graph.mul %0, %two : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %2 = graph.add %1, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = graph.add %2, %wt : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
func.func @stage1.forward(%x: tensor<8x8xf32> {graph.name = "x"}) -> (tensor<8x8xf32> {graph.name = "y"}) attributes {dist.stage = 1 : i64} {
  %three = graph.constant dense<3.0> : tensor<f32>
  %wt = graph.weight "w" {file = "m.onnx", offset = 0, size = 256, graph.transposed} : tensor<8x8xf32>
  %0 = graph.mul %x, %three : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %1 = graph.add %0, %wt : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
