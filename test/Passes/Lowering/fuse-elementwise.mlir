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

// -----

// A tree and a diamond: exp(x) is read by neg and abs, both read by the add,
// and the add reads x again; everything is one kernel, each step once, in
// program order, x read once.
// CHECK-LABEL: func.func @diamond
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[OUT:.*]] = exec.alloc : memref<4xf32>
// CHECK-NOT: exec.alloc
// CHECK: exec.kernel "fused"(%[[X]]) -> (%[[OUT]]) {args = array<i64: 0, 1, 1, 2, 3, 0, 4>, ops = ["exp", "neg", "abs", "add", "mul"]} {source = "e, n, a, s, m"}
// CHECK-NOT: exec.kernel
func.func @diamond() {
  %x = exec.input "x" {index = 0 : i64} : memref<4xf32>
  %t0 = exec.alloc : memref<4xf32>
  exec.kernel "exp"(%x) -> (%t0) {} {source = "e"} : (memref<4xf32>) -> memref<4xf32>
  %t1 = exec.alloc : memref<4xf32>
  exec.kernel "neg"(%t0) -> (%t1) {} {source = "n"} : (memref<4xf32>) -> memref<4xf32>
  %t2 = exec.alloc : memref<4xf32>
  exec.kernel "abs"(%t0) -> (%t2) {} {source = "a"} : (memref<4xf32>) -> memref<4xf32>
  %t3 = exec.alloc : memref<4xf32>
  exec.kernel "add"(%t1, %t2) -> (%t3) {} {source = "s"} : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  %out = exec.alloc : memref<4xf32>
  exec.kernel "mul"(%x, %t3) -> (%out) {} {source = "m"} : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  exec.output "y" %out {index = 0 : i64} : memref<4xf32>
  return
}

// -----

// A square reads its operand twice: still fused, the step read twice.
// CHECK-LABEL: func.func @square
// CHECK: exec.kernel "fused"(%{{.*}}) -> (%{{.*}}) {args = array<i64: 0, 1, 1>, ops = ["tanh", "mul"]}
// CHECK-NOT: exec.kernel
func.func @square() {
  %x = exec.input "x" {index = 0 : i64} : memref<4xf32>
  %t0 = exec.alloc : memref<4xf32>
  exec.kernel "tanh"(%x) -> (%t0) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %out = exec.alloc : memref<4xf32>
  exec.kernel "mul"(%t0, %t0) -> (%out) {} {source = ""} : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  exec.output "y" %out {index = 0 : i64} : memref<4xf32>
  return
}

// -----

// exp(x) read by two chains that end in two outputs: it stays materialized,
// each chain is fused on its own.
// CHECK-LABEL: func.func @shared
// CHECK: exec.kernel "exp"
// CHECK: exec.kernel "fused"({{.*}}) {args = array<i64: 0, 1>, ops = ["neg", "sqrt"]}
// CHECK: exec.kernel "fused"({{.*}}) {args = array<i64: 0, 1>, ops = ["abs", "log"]}
func.func @shared() {
  %x = exec.input "x" {index = 0 : i64} : memref<4xf32>
  %t0 = exec.alloc : memref<4xf32>
  exec.kernel "exp"(%x) -> (%t0) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %t1 = exec.alloc : memref<4xf32>
  exec.kernel "neg"(%t0) -> (%t1) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %y = exec.alloc : memref<4xf32>
  exec.kernel "sqrt"(%t1) -> (%y) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %t2 = exec.alloc : memref<4xf32>
  exec.kernel "abs"(%t0) -> (%t2) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  %z = exec.alloc : memref<4xf32>
  exec.kernel "log"(%t2) -> (%z) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  exec.output "y" %y {index = 0 : i64} : memref<4xf32>
  exec.output "z" %z {index = 1 : i64} : memref<4xf32>
  return
}
