// RUN: shardc-opt %s --split-input-file --shardc-write-states-in-place | FileCheck %s

// SGD's update w - lr * g, fused: the kernel writes the weight's state
// itself (reading and writing each element at the same index); the copy and
// the new value's buffer go.
// CHECK-LABEL: func.func @sgd
// CHECK: %[[G:.*]] = exec.input "g"
// CHECK: %[[W:.*]] = exec.weight "w"
// CHECK-NOT: exec.alloc
// CHECK: exec.kernel "fused"(%[[W]], %[[G]]) -> (%[[W]])
// CHECK-NOT: "copy"
func.func @sgd() {
  %g = exec.input "g" {index = 0 : i64} : memref<4x8xf32>
  %w = exec.weight "w" {file = "w.bin", graph.train = "param", offset = 0 : i64, size = 128 : i64} : memref<4x8xf32>
  %new = exec.alloc : memref<4x8xf32>
  exec.kernel "fused"(%w, %g) -> (%new) {args = array<i64: 1, 0, 2>, ops = ["neg", "add"]} {source = "u"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  exec.kernel "copy"(%new) -> (%w) {} {source = "u"} : (memref<4x8xf32>) -> memref<4x8xf32>
  return
}

// -----

// Adam's moment is read again by the weight's update after it is computed:
// the update reads the state, which now holds the new moment.
// CHECK-LABEL: func.func @moment
// CHECK: %[[M:.*]] = exec.weight "w.exp_avg"
// CHECK: exec.kernel "fused"(%[[M]], %{{.*}}) -> (%[[M]])
// CHECK: exec.kernel "mul"(%[[M]], %{{.*}}) -> (%[[OUT:.*]])
// CHECK-NOT: "copy"
func.func @moment() {
  %g = exec.input "g" {index = 0 : i64} : memref<4x8xf32>
  %m = exec.weight "w.exp_avg" {file = "", graph.train = "state", offset = 0 : i64, size = 128 : i64} : memref<4x8xf32>
  %new = exec.alloc : memref<4x8xf32>
  exec.kernel "fused"(%m, %g) -> (%new) {args = array<i64: 0, 1>, ops = ["add"]} {source = "m"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  %use = exec.alloc : memref<4x8xf32>
  exec.kernel "mul"(%new, %g) -> (%use) {} {source = "u"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  exec.kernel "copy"(%new) -> (%m) {} {source = "m"} : (memref<4x8xf32>) -> memref<4x8xf32>
  exec.output "y" %use {index = 0 : i64} : memref<4x8xf32>
  return
}

// -----

// The old value is still read after the new one is computed: the copy stays.
// CHECK-LABEL: func.func @read_after
// CHECK: %[[W:.*]] = exec.weight "w"
// CHECK: %[[NEW:.*]] = exec.alloc
// CHECK: exec.kernel "fused"(%[[W]], %{{.*}}) -> (%[[NEW]])
// CHECK: exec.kernel "mul"(%[[W]]
// CHECK: exec.kernel "copy"(%[[NEW]]) -> (%[[W]])
func.func @read_after() {
  %g = exec.input "g" {index = 0 : i64} : memref<4x8xf32>
  %w = exec.weight "w" {file = "w.bin", graph.train = "param", offset = 0 : i64, size = 128 : i64} : memref<4x8xf32>
  %new = exec.alloc : memref<4x8xf32>
  exec.kernel "fused"(%w, %g) -> (%new) {args = array<i64: 0, 1>, ops = ["add"]} {source = "u"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  %old = exec.alloc : memref<4x8xf32>
  exec.kernel "mul"(%w, %g) -> (%old) {} {source = "r"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  exec.kernel "copy"(%new) -> (%w) {} {source = "u"} : (memref<4x8xf32>) -> memref<4x8xf32>
  exec.output "y" %old {index = 0 : i64} : memref<4x8xf32>
  return
}

// -----

// A stage's update program declares a storage where the copy first writes
// it, after the kernel that computes the new value: the declaration moves up
// to the kernel that now writes it.
// CHECK-LABEL: func.func @late_storage
// CHECK: %[[V:.*]] = exec.input "v"
// CHECK-NEXT: %[[B:.*]] = exec.weight "b"
// CHECK-NEXT: exec.kernel "fused"(%[[V]]) -> (%[[B]])
// CHECK-NOT: "copy"
func.func @late_storage() {
  %v = exec.input "v" {index = 0 : i64} : memref<8xf32>
  %new = exec.alloc : memref<8xf32>
  exec.kernel "fused"(%v) -> (%new) {args = array<i64: 0>, ops = ["sqrt"]} {source = "u"} : (memref<8xf32>) -> memref<8xf32>
  %b = exec.weight "b" {file = "b.bin", graph.train = "param", offset = 0 : i64, size = 32 : i64} : memref<8xf32>
  exec.kernel "copy"(%new) -> (%b) {} {source = "u"} : (memref<8xf32>) -> memref<8xf32>
  return
}
