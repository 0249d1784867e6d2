// RUN: shardc-opt %s --shardc-plan-memory | FileCheck %s

// a dies when b is made; c can reuse a's bytes but not b's; the output lives
// to the end. 64-byte alignment; peak 2 x 64 bytes.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: attributes {exec.arena_bytes = 128 : i64}
// CHECK: %[[A:.*]] = exec.alloc {offset = 0 : i64} : memref<16xf32>
// CHECK: %[[B:.*]] = exec.alloc {offset = 64 : i64} : memref<16xf32>
// CHECK: %[[C:.*]] = exec.alloc {offset = 0 : i64} : memref<16xf32>
func.func @chain() {
  %x = exec.input "x" {index = 0 : i64} : memref<16xf32>
  %a = exec.alloc : memref<16xf32>
  exec.kernel "neg"(%x) -> (%a) {} {source = ""} : (memref<16xf32>) -> memref<16xf32>
  %b = exec.alloc : memref<16xf32>
  exec.kernel "exp"(%a) -> (%b) {} {source = ""} : (memref<16xf32>) -> memref<16xf32>
  %c = exec.alloc : memref<16xf32>
  exec.kernel "tanh"(%b) -> (%c) {} {source = ""} : (memref<16xf32>) -> memref<16xf32>
  exec.output "y" %c {index = 0 : i64} : memref<16xf32>
  return
}
