// RUN: shardc-opt %s --split-input-file --shardc-fuse-elementwise | FileCheck %s

// (x * s + b) -> gelu: three kernels, one fused kernel, no intermediates.
// CHECK-LABEL: func.func @chain
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[S:.*]] = exec.input "s"
// CHECK: %[[B:.*]] = exec.input "b"
// CHECK: %[[OUT:.*]] = exec.alloc : memref<4x8xf32>
// CHECK-NOT: exec.alloc
// CHECK: exec.kernel "fused"(%[[X]], %[[S]], %[[B]]) -> (%[[OUT]]) {args = array<i64: 0, 1, 3, 2, 4>, ops = ["mul", "add", "gelu_tanh"]} {source = "m, a, g"}
// CHECK-NOT: exec.kernel
func.func @chain() {
  %x = exec.input "x" {index = 0 : i64} : memref<4x8xf32>
  %s = exec.input "s" {index = 1 : i64} : memref<8xf32>
  %b = exec.input "b" {index = 2 : i64} : memref<4x8xf32>
  %t0 = exec.alloc : memref<4x8xf32>
  exec.kernel "mul"(%x, %s) -> (%t0) {} {source = "m"} : (memref<4x8xf32>, memref<8xf32>) -> memref<4x8xf32>
  %t1 = exec.alloc : memref<4x8xf32>
  exec.kernel "add"(%t0, %b) -> (%t1) {} {source = "a"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  %out = exec.alloc : memref<4x8xf32>
  exec.kernel "gelu"(%t1) -> (%out) {approximate_tanh = true} {source = "g"} : (memref<4x8xf32>) -> memref<4x8xf32>
  exec.output "y" %out {index = 0 : i64} : memref<4x8xf32>
  return
}

// -----

// An intermediate that is also an output, or read by a non-elementwise
// kernel, must stay materialized.
// CHECK-LABEL: func.func @escaping
// CHECK: exec.kernel "exp"
// CHECK: exec.kernel "neg"
// CHECK: exec.kernel "softmax"
func.func @escaping() {
  %x = exec.input "x" {index = 0 : i64} : memref<4xf32>
  %t0 = exec.alloc : memref<4xf32>
  exec.kernel "exp"(%x) -> (%t0) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %t1 = exec.alloc : memref<4xf32>
  exec.kernel "neg"(%t0) -> (%t1) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %t2 = exec.alloc : memref<4xf32>
  exec.kernel "softmax"(%t1) -> (%t2) {axis = 0 : i64} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  exec.output "e" %t0 {index = 0 : i64} : memref<4xf32>
  exec.output "s" %t2 {index = 1 : i64} : memref<4xf32>
  return
}
