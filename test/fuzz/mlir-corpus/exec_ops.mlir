// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// exec ops parse, verify and print back.

// CHECK-LABEL: func.func @program
// CHECK-SAME: attributes {exec.arena_bytes = 128 : i64}
func.func @program() attributes {exec.arena_bytes = 128 : i64} {
  // CHECK: %[[X:.*]] = exec.input "x" {index = 0 : i64} : memref<2x4xf32>
  %x = exec.input "x" {index = 0 : i64} : memref<2x4xf32>
  // CHECK: %[[W:.*]] = exec.weight "w" {file = "m.onnx", offset = 16 : i64, size = 64 : i64} : memref<4x4xf32>
  %w = exec.weight "w" {file = "m.onnx", offset = 16, size = 64} : memref<4x4xf32>
  // CHECK: %[[C:.*]] = exec.constant "c" dense<1.000000e+00> : tensor<4xf32> : memref<4xf32>
  %c = exec.constant "c" dense<1.0> : tensor<4xf32> : memref<4xf32>
  // CHECK: %[[B:.*]] = exec.alloc {offset = 0 : i64} : memref<2x4xf32>
  %b = exec.alloc {offset = 0} : memref<2x4xf32>
  // CHECK: exec.kernel "linear"(%[[X]], %[[W]], %[[C]]) -> (%[[B]]) {transpose_weight = false} {source = "fc"} : (memref<2x4xf32>, memref<4x4xf32>, memref<4xf32>) -> memref<2x4xf32>
  exec.kernel "linear"(%x, %w, %c) -> (%b) {transpose_weight = false} {source = "fc"} : (memref<2x4xf32>, memref<4x4xf32>, memref<4xf32>) -> memref<2x4xf32>
  // CHECK: %[[V:.*]] = exec.view %[[B]] : memref<2x4xf32> to memref<8xf32>
  %v = exec.view %b : memref<2x4xf32> to memref<8xf32>
  // CHECK: exec.output "y" %[[V]] {index = 0 : i64} : memref<8xf32>
  exec.output "y" %v {index = 0 : i64} : memref<8xf32>
  return
}
