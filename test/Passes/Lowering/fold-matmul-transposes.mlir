// RUN: shardc-opt %s --split-input-file --shardc-fold-matmul-transposes | FileCheck %s

// A weight gradient x^T dy: the matmul reads x itself, transposed, and the
// transpose and its buffer go.
// CHECK-LABEL: func.func @weight_gradient
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[DY:.*]] = exec.input "dy"
// CHECK-NOT: "transpose"
// CHECK: exec.kernel "matmul"(%[[X]], %[[DY]]) -> (%{{.*}}) {transpose_lhs = true}
func.func @weight_gradient() {
  %x = exec.input "x" {index = 0 : i64} : memref<6x4xf32>
  %dy = exec.input "dy" {index = 1 : i64} : memref<6x8xf32>
  %xt = exec.alloc : memref<4x6xf32>
  exec.kernel "transpose"(%x) -> (%xt) {perm = array<i64: 1, 0>} {source = "t"} : (memref<6x4xf32>) -> memref<4x6xf32>
  %dw = exec.alloc : memref<4x8xf32>
  exec.kernel "matmul"(%xt, %dy) -> (%dw) {} {source = "m"} : (memref<4x6xf32>, memref<6x8xf32>) -> memref<4x8xf32>
  exec.output "dw" %dw {index = 0 : i64} : memref<4x8xf32>
  return
}

// -----

// Attention's backward: both operands swapped in their last two dims, and
// the transposed probabilities are read again by another kernel, so that
// transpose stays.
// CHECK-LABEL: func.func @both_operands
// CHECK: %[[P:.*]] = exec.input "p"
// CHECK: %[[V:.*]] = exec.input "v"
// CHECK: %[[PT:.*]] = exec.alloc
// CHECK: exec.kernel "transpose"(%[[P]]) -> (%[[PT]])
// CHECK-NOT: "transpose"
// CHECK: exec.kernel "matmul"(%[[P]], %[[V]]) -> (%{{.*}}) {transpose_lhs = true, transpose_rhs = true}
// CHECK: exec.kernel "neg"(%[[PT]])
func.func @both_operands() {
  %p = exec.input "p" {index = 0 : i64} : memref<2x3x5x5xf32>
  %v = exec.input "v" {index = 1 : i64} : memref<2x3x4x5xf32>
  %pt = exec.alloc : memref<2x3x5x5xf32>
  exec.kernel "transpose"(%p) -> (%pt) {perm = array<i64: 0, 1, 3, 2>} {source = "t"} : (memref<2x3x5x5xf32>) -> memref<2x3x5x5xf32>
  %vt = exec.alloc : memref<2x3x5x4xf32>
  exec.kernel "transpose"(%v) -> (%vt) {perm = array<i64: 0, 1, 3, 2>} {source = "t"} : (memref<2x3x4x5xf32>) -> memref<2x3x5x4xf32>
  %out = exec.alloc : memref<2x3x5x4xf32>
  exec.kernel "matmul"(%pt, %vt) -> (%out) {} {source = "m"} : (memref<2x3x5x5xf32>, memref<2x3x5x4xf32>) -> memref<2x3x5x4xf32>
  %neg = exec.alloc : memref<2x3x5x5xf32>
  exec.kernel "neg"(%pt) -> (%neg) {} {source = "n"} : (memref<2x3x5x5xf32>) -> memref<2x3x5x5xf32>
  exec.output "out" %out {index = 0 : i64} : memref<2x3x5x4xf32>
  exec.output "neg" %neg {index = 1 : i64} : memref<2x3x5x5xf32>
  return
}

// -----

// Left alone: a transpose that moves a dim other than the last two, one of
// an integer tensor, and one whose input a kernel overwrites before the
// matmul reads it (the state a training step writes in place).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: "transpose"
// CHECK-NOT: transpose_lhs
// CHECK-NOT: transpose_rhs
func.func @kept() {
  %a = exec.input "a" {index = 0 : i64} : memref<2x3x4xf32>
  %b = exec.input "b" {index = 1 : i64} : memref<3x2x5xf32>
  %at = exec.alloc : memref<3x2x4xf32>
  exec.kernel "transpose"(%a) -> (%at) {perm = array<i64: 1, 0, 2>} {source = "t"} : (memref<2x3x4xf32>) -> memref<3x2x4xf32>
  %m1 = exec.alloc : memref<3x4x5xf32>
  exec.kernel "matmul"(%at, %b) -> (%m1) {} {source = "m"} : (memref<3x2x4xf32>, memref<3x2x5xf32>) -> memref<3x4x5xf32>
  %i = exec.input "i" {index = 2 : i64} : memref<3x2xi64>
  %it = exec.alloc : memref<2x3xi64>
  exec.kernel "transpose"(%i) -> (%it) {perm = array<i64: 1, 0>} {source = "t"} : (memref<3x2xi64>) -> memref<2x3xi64>
  %j = exec.input "j" {index = 3 : i64} : memref<3x4xi64>
  %m2 = exec.alloc : memref<2x4xi64>
  exec.kernel "matmul"(%it, %j) -> (%m2) {} {source = "m"} : (memref<2x3xi64>, memref<3x4xi64>) -> memref<2x4xi64>
  %w = exec.weight "w" {file = "w.bin", graph.train = "param", offset = 0 : i64, size = 32 : i64} : memref<2x4xf32>
  %wt = exec.alloc : memref<4x2xf32>
  exec.kernel "transpose"(%w) -> (%wt) {perm = array<i64: 1, 0>} {source = "t"} : (memref<2x4xf32>) -> memref<4x2xf32>
  %g = exec.input "g" {index = 4 : i64} : memref<2x4xf32>
  exec.kernel "add"(%w, %g) -> (%w) {} {source = "u"} : (memref<2x4xf32>, memref<2x4xf32>) -> memref<2x4xf32>
  %c = exec.input "c" {index = 5 : i64} : memref<2x3xf32>
  %m3 = exec.alloc : memref<4x3xf32>
  exec.kernel "matmul"(%wt, %c) -> (%m3) {} {source = "m"} : (memref<4x2xf32>, memref<2x3xf32>) -> memref<4x3xf32>
  exec.output "m1" %m1 {index = 0 : i64} : memref<3x4x5xf32>
  exec.output "m2" %m2 {index = 1 : i64} : memref<2x4xi64>
  exec.output "m3" %m3 {index = 2 : i64} : memref<4x3xf32>
  return
}
