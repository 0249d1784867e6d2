// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// Every graph op parses, verifies and prints back to the same form.

// CHECK-LABEL: func.func @sources
func.func @sources() -> (tensor<2xf32>, tensor<4x8xf16>) {
  // CHECK: graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: graph.weight "w" {file = "model.onnx", offset = 128 : i64, size = 64 : i64} : tensor<4x8xf16>
  %w = graph.weight "w" {file = "model.onnx", offset = 128, size = 64} : tensor<4x8xf16>
  return %c, %w : tensor<2xf32>, tensor<4x8xf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi64>,
                       %m: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK: graph.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.sub %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = graph.mul %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.div %2, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.pow %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %4 = graph.pow %3, %i : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  %5 = graph.max %4, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.min %5, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = graph.neg %6 : tensor<2x3xf32>
  %8 = graph.sqrt %7 : tensor<2x3xf32>
  %9 = graph.rsqrt %8 : tensor<2x3xf32>
  %10 = graph.exp %9 : tensor<2x3xf32>
  %11 = graph.erf %10 : tensor<2x3xf32>
  %12 = graph.tanh %11 : tensor<2x3xf32>
  %13 = graph.sigmoid %12 : tensor<2x3xf32>
  %14 = graph.relu %13 : tensor<2x3xf32>
  // CHECK: graph.gelu %{{.*}} {approximate_tanh = true} : tensor<2x3xf32>
  %15 = graph.gelu %14 {approximate_tanh = true} : tensor<2x3xf32>
  %16 = graph.silu %15 : tensor<2x3xf32>
  %17 = graph.cos %16 : tensor<2x3xf32>
  %18 = graph.sin %17 : tensor<2x3xf32>
  // CHECK: graph.compare lt, %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %19 = graph.compare lt, %18, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %20 = graph.not %19 : tensor<2x3xi1>
  %21 = graph.and %20, %m : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: graph.where
  %22 = graph.where %21, %18, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.cast %{{.*}} : tensor<2x3xf32> to tensor<2x3xf16>
  %23 = graph.cast %22 : tensor<2x3xf32> to tensor<2x3xf16>
  %24 = graph.cast %23 : tensor<2x3xf16> to tensor<2x3xf32>
  return %24 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%x: tensor<2x4x8xf32>, %w: tensor<8x16xf32>, %v: tensor<8xf32>)
    -> (tensor<2x4x16xf32>, tensor<2x4xf32>, tensor<2x1x8xf32>, tensor<2x4x8xf32>, tensor<2x4x2xf32>,
        tensor<2x4x2xi64>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %0 = graph.matmul %x, %w : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  %1 = graph.matmul %x, %v : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = true}
  %2 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<2x1x8xf32>
  %3 = graph.reduce_sum %x {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x4x8xf32>) -> tensor<f32>
  %4 = graph.reduce_max %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  %5 = graph.softmax %x {axis = 2 : i64} : tensor<2x4x8xf32>
  // CHECK: graph.topk %{{.*}} {axis = 2 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x4x8xf32>) -> (tensor<2x4x2xf32>, tensor<2x4x2xi64>)
  %values, %indices = graph.topk %x {axis = 2 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x4x8xf32>) -> (tensor<2x4x2xf32>, tensor<2x4x2xi64>)
  return %0, %1, %2, %5, %values, %indices : tensor<2x4x16xf32>, tensor<2x4xf32>, tensor<2x1x8xf32>, tensor<2x4x8xf32>, tensor<2x4x2xf32>, tensor<2x4x2xi64>
}

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<2x4x8xf32>, %ids: tensor<3xi64>, %table: tensor<10x8xf32>,
                    %idx: tensor<2x4x1xi64>, %upd: tensor<2x4x1xf32>) -> tensor<3x8xf32> {
  // CHECK: graph.reshape %{{.*}} : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %0 = graph.reshape %x : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  // CHECK: graph.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: graph.slice %{{.*}} {ends = array<i64: -1, 8>, starts = array<i64: 7, 0>, steps = array<i64: -2, 1>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = graph.slice %1 {starts = array<i64: 7, 0>, ends = array<i64: -1, 8>, steps = array<i64: -2, 1>} : (tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = graph.concat %2, %2 {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  // CHECK: graph.split %{{.*}} {axis = 0 : i64, sizes = array<i64: 3, 5>} : (tensor<8x8xf32>) -> (tensor<3x8xf32>, tensor<5x8xf32>)
  %4:2 = graph.split %3 {axis = 0 : i64, sizes = array<i64: 3, 5>} : (tensor<8x8xf32>) -> (tensor<3x8xf32>, tensor<5x8xf32>)
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  %5 = graph.gather %table, %ids {axis = 0 : i64} : (tensor<10x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  %6 = graph.expand %5 : (tensor<3x8xf32>) -> tensor<2x3x8xf32>
  // CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, reduction = 1 : i32}
  %7 = graph.scatter_elements %x, %idx, %upd {axis = 2 : i64, reduction = 1 : i32} : (tensor<2x4x8xf32>, tensor<2x4x1xi64>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  %8 = graph.trilu %7 {k = 0 : i64, upper = false} : tensor<2x4x8xf32>
  %9 = graph.add %5, %4#0 : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %9 : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @composites
func.func @composites(%x: tensor<2x16x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>,
                      %q: tensor<2x4x16x16xf32>, %kv: tensor<2x2x16x16xf32>,
                      %cos: tensor<1x1x16x16xf32>) -> (tensor<2x16x64xf32>, tensor<2x4x16x16xf32>) {
  // CHECK: graph.linear %{{.*}}, %{{.*}}, %{{.*}} {transpose_weight = true}
  %0 = graph.linear %x, %w, %b {transpose_weight = true} : (tensor<2x16x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: graph.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64}
  %1 = graph.layer_norm %0, %b, %b {axis = 2 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %2 = graph.rms_norm %1, %b {axis = 2 : i64, epsilon = 1.0e-6 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  // CHECK: graph.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = 2.500000e-01 : f64} : (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>) -> tensor<2x4x16x16xf32>
  %3 = graph.attention %q, %kv, %kv {causal = true, scale = 0.25 : f64} : (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>) -> tensor<2x4x16x16xf32>
  // CHECK: graph.rotary %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<2x4x16x16xf32>
  %4 = graph.rotary %3, %cos, %cos : (tensor<2x4x16x16xf32>, tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>) -> tensor<2x4x16x16xf32>
  // CHECK: graph.composite "mlp"(%{{.*}}, %{{.*}}) : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  // CHECK: graph.yield %{{.*}} : tensor<2x16x64xf32>
  %5 = graph.composite "mlp"(%2, %w) : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32> {
  ^bb0(%in: tensor<2x16x64xf32>, %weight: tensor<64x64xf32>):
    %h = graph.linear %in, %weight : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %g = graph.gelu %h : tensor<2x16x64xf32>
    graph.yield %g : tensor<2x16x64xf32>
  }
  return %5, %4 : tensor<2x16x64xf32>, tensor<2x4x16x16xf32>
}

// CHECK-LABEL: func.func @moe
func.func @moe(%x: tensor<8x16xf32>, %i: tensor<8x2xi64>, %g: tensor<8x2xf32>,
               %gate: tensor<4x32x16xf32>, %up: tensor<4x32x16xf32>,
               %down: tensor<4x16x32xf32>) -> tensor<8x16xf32> {
  // CHECK: graph.moe %{{.*}}, %{{.*}}, %{{.*}}, experts(%{{.*}}, %{{.*}}, %{{.*}}) {activation = "silu", experts = 4 : i64, transpose_weights = true}
  %0 = graph.moe %x, %i, %g, experts(%gate, %up, %down) {experts = 4 : i64, activation = "silu", transpose_weights = true} : (tensor<8x16xf32>, tensor<8x2xi64>, tensor<8x2xf32>, tensor<4x32x16xf32>, tensor<4x32x16xf32>, tensor<4x16x32xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
