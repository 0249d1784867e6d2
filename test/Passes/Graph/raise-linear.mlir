// RUN: shardc-opt %s --split-input-file --shardc-raise-linear | FileCheck %s

// CHECK-LABEL: func.func @matmul_add
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x64xf32>)
func.func @matmul_add(%x: tensor<2x16x64xf32>) -> tensor<2x16x32xf32> {
  // CHECK-DAG: %[[W:.*]] = graph.weight "w"
  // CHECK-DAG: %[[B:.*]] = graph.weight "b"
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 8192} : tensor<64x32xf32>
  %b = graph.weight "b" {file = "m.onnx", offset = 8192, size = 128} : tensor<32xf32>
  %0 = graph.matmul %x, %w : (tensor<2x16x64xf32>, tensor<64x32xf32>) -> tensor<2x16x32xf32>
  %1 = graph.add %b, %0 : (tensor<32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
  // CHECK: %[[L:.*]] = graph.linear %[[X]], %[[W]], %[[B]] : (tensor<2x16x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  // CHECK-NOT: graph.matmul
  // CHECK: return %[[L]]
  return %1 : tensor<2x16x32xf32>
}

// -----

// nn.Linear / Gemm(transB=1): the weight is [out, in] behind a transpose.
// CHECK-LABEL: func.func @transposed
func.func @transposed(%x: tensor<4x64xf32>) -> tensor<4x32xf32> {
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 8192} : tensor<32x64xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32>
  %0 = graph.matmul %x, %t : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  // CHECK: graph.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<4x64xf32>, tensor<32x64xf32>) -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// Products of two activations (attention scores) are not linear layers, and a
// bias that broadcasts over more than the features stays an add.
// CHECK-LABEL: func.func @not_linear
func.func @not_linear(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>, %x: tensor<4x64xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: graph.matmul
  %0 = graph.matmul %a, %b : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %w = graph.weight "w" {file = "m.onnx", offset = 0, size = 2048} : tensor<64x8xf32>
  %bias = graph.weight "b" {file = "m.onnx", offset = 2048, size = 128} : tensor<4x8xf32>
  %1 = graph.matmul %x, %w : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  %2 = graph.add %1, %bias : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[L:.*]] = graph.linear %{{.*}}, %{{.*}} : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  // CHECK: graph.add %[[L]]
  return %0, %2 : tensor<4x8xf32>, tensor<4x8xf32>
}
