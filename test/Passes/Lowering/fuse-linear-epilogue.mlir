// RUN: shardc-opt %s --split-input-file --shardc-fuse-linear-epilogue | FileCheck %s

// GELU after the MLP's first linear, and the residual add after its second:
// each elementwise kernel becomes the linear's epilogue, its other input an
// extra input after (input, weight, bias); the GEMM's own buffers go.
// CHECK-LABEL: func.func @mlp
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[W1:.*]] = exec.input "w1"
// CHECK: %[[B1:.*]] = exec.input "b1"
// CHECK: %[[W2:.*]] = exec.input "w2"
// CHECK: %[[H:.*]] = exec.alloc : memref<4x16xf32>
// CHECK-NEXT: exec.kernel "linear"(%[[X]], %[[W1]], %[[B1]]) -> (%[[H]]) {epilogue_args = array<i64: 0>, epilogue_inputs = 0 : i64, epilogue_ops = ["gelu"], transpose_weight = false} {source = "fc1, act"}
// CHECK: %[[Y:.*]] = exec.alloc : memref<4x8xf32>
// CHECK-NEXT: exec.kernel "linear"(%[[H]], %[[W2]], %[[X]]) -> (%[[Y]]) {epilogue_args = array<i64: 0, 1>, epilogue_inputs = 1 : i64, epilogue_ops = ["add"], transpose_weight = true} {source = "fc2, residual"}
// CHECK-NOT: exec.alloc
// CHECK-NOT: exec.kernel
func.func @mlp() {
  %x = exec.input "x" {index = 0 : i64} : memref<4x8xf32>
  %w1 = exec.input "w1" {index = 1 : i64} : memref<8x16xf32>
  %b1 = exec.input "b1" {index = 2 : i64} : memref<16xf32>
  %w2 = exec.input "w2" {index = 3 : i64} : memref<8x16xf32>
  %t = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w1, %b1) -> (%t) {transpose_weight = false} {source = "fc1"} : (memref<4x8xf32>, memref<8x16xf32>, memref<16xf32>) -> memref<4x16xf32>
  %h = exec.alloc : memref<4x16xf32>
  exec.kernel "gelu"(%t) -> (%h) {approximate_tanh = false} {source = "act"} : (memref<4x16xf32>) -> memref<4x16xf32>
  %u = exec.alloc : memref<4x8xf32>
  exec.kernel "linear"(%h, %w2) -> (%u) {transpose_weight = true} {source = "fc2"} : (memref<4x16xf32>, memref<8x16xf32>) -> memref<4x8xf32>
  %y = exec.alloc : memref<4x8xf32>
  exec.kernel "add"(%x, %u) -> (%y) {} {source = "residual"} : (memref<4x8xf32>, memref<4x8xf32>) -> memref<4x8xf32>
  exec.output "y" %y {index = 0 : i64} : memref<4x8xf32>
  return
}

// -----

// SwiGLU: silu(gate) * up, a fused kernel after both projections. It becomes
// the gate linear's epilogue (silu, then times up), and that linear moves
// down to where the fused kernel stood, after the up projection.
// CHECK-LABEL: func.func @swiglu
// CHECK: %[[X:.*]] = exec.input "x"
// CHECK: %[[WG:.*]] = exec.input "wg"
// CHECK: %[[WU:.*]] = exec.input "wu"
// CHECK: %[[UP:.*]] = exec.alloc
// CHECK-NEXT: exec.kernel "linear"(%[[X]], %[[WU]]) -> (%[[UP]]) {transpose_weight = false} {source = "up"}
// CHECK: %[[OUT:.*]] = exec.alloc
// CHECK-NEXT: exec.kernel "linear"(%[[X]], %[[WG]], %[[UP]]) -> (%[[OUT]]) {epilogue_args = array<i64: 0, 2, 1>, epilogue_inputs = 1 : i64, epilogue_ops = ["silu", "mul"], transpose_weight = false} {source = "gate, swiglu"}
// CHECK-NOT: exec.kernel
func.func @swiglu() {
  %x = exec.input "x" {index = 0 : i64} : memref<4x8xf32>
  %wg = exec.input "wg" {index = 1 : i64} : memref<8x16xf32>
  %wu = exec.input "wu" {index = 2 : i64} : memref<8x16xf32>
  %g = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %wg) -> (%g) {transpose_weight = false} {source = "gate"} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %u = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %wu) -> (%u) {transpose_weight = false} {source = "up"} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %out = exec.alloc : memref<4x16xf32>
  exec.kernel "fused"(%g, %u) -> (%out) {args = array<i64: 0, 2, 1>, ops = ["silu", "mul"]} {source = "swiglu"} : (memref<4x16xf32>, memref<4x16xf32>) -> memref<4x16xf32>
  exec.output "y" %out {index = 0 : i64} : memref<4x16xf32>
  return
}

// -----

// Not epilogues: a result read twice (or returned), a reader that broadcasts
// an input ([16] against [4, 16]), a step that reads an extra input before
// the running value in a subtraction (b - gemm), a unary op on an extra
// input, a reader that reads the result but computes from the extra input
// only (tanh(b)), an op post-ops cannot run (exp), half precision, and a
// linear whose input is written between it and its reader (an in-place
// all-reduce).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: epilogue
func.func @kept() {
  %x = exec.input "x" {index = 0 : i64} : memref<4x8xf32>
  %w = exec.input "w" {index = 1 : i64} : memref<8x16xf32>
  %r = exec.input "r" {index = 2 : i64} : memref<16xf32>
  %b = exec.input "b" {index = 3 : i64} : memref<4x16xf32>
  %t0 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t0) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y0 = exec.alloc : memref<4x16xf32>
  exec.kernel "gelu"(%t0) -> (%y0) {approximate_tanh = false} {source = ""} : (memref<4x16xf32>) -> memref<4x16xf32>
  exec.output "t0" %t0 {index = 0 : i64} : memref<4x16xf32>
  %t1 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t1) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y1 = exec.alloc : memref<4x16xf32>
  exec.kernel "add"(%t1, %r) -> (%y1) {} {source = ""} : (memref<4x16xf32>, memref<16xf32>) -> memref<4x16xf32>
  %t2 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t2) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y2 = exec.alloc : memref<4x16xf32>
  exec.kernel "sub"(%b, %t2) -> (%y2) {} {source = ""} : (memref<4x16xf32>, memref<4x16xf32>) -> memref<4x16xf32>
  %t3 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t3) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y3 = exec.alloc : memref<4x16xf32>
  exec.kernel "fused"(%t3, %b) -> (%y3) {args = array<i64: 1, 0, 2>, ops = ["silu", "mul"]} {source = ""} : (memref<4x16xf32>, memref<4x16xf32>) -> memref<4x16xf32>
  %t7 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t7) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y7 = exec.alloc : memref<4x16xf32>
  exec.kernel "fused"(%t7, %b) -> (%y7) {args = array<i64: 1>, ops = ["tanh"]} {source = ""} : (memref<4x16xf32>, memref<4x16xf32>) -> memref<4x16xf32>
  %t4 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%x, %w) -> (%t4) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  %y4 = exec.alloc : memref<4x16xf32>
  exec.kernel "exp"(%t4) -> (%y4) {} {source = ""} : (memref<4x16xf32>) -> memref<4x16xf32>
  %xh = exec.input "xh" {index = 4 : i64} : memref<4x8xf16>
  %wh = exec.input "wh" {index = 5 : i64} : memref<8x16xf16>
  %t5 = exec.alloc : memref<4x16xf16>
  exec.kernel "linear"(%xh, %wh) -> (%t5) {transpose_weight = false} {source = ""} : (memref<4x8xf16>, memref<8x16xf16>) -> memref<4x16xf16>
  %y5 = exec.alloc : memref<4x16xf16>
  exec.kernel "gelu"(%t5) -> (%y5) {approximate_tanh = false} {source = ""} : (memref<4x16xf16>) -> memref<4x16xf16>
  %xs = exec.alloc : memref<4x8xf32>
  exec.kernel "neg"(%x) -> (%xs) {} {source = ""} : (memref<4x8xf32>) -> memref<4x8xf32>
  %t6 = exec.alloc : memref<4x16xf32>
  exec.kernel "linear"(%xs, %w) -> (%t6) {transpose_weight = false} {source = ""} : (memref<4x8xf32>, memref<8x16xf32>) -> memref<4x16xf32>
  exec.kernel "all_reduce"(%xs) -> (%xs) {mesh_axes = ["tp"]} {source = ""} : (memref<4x8xf32>) -> memref<4x8xf32>
  %y6 = exec.alloc : memref<4x16xf32>
  exec.kernel "relu"(%t6) -> (%y6) {} {source = ""} : (memref<4x16xf32>) -> memref<4x16xf32>
  exec.output "y0" %y0 {index = 1 : i64} : memref<4x16xf32>
  exec.output "y1" %y1 {index = 2 : i64} : memref<4x16xf32>
  exec.output "y2" %y2 {index = 3 : i64} : memref<4x16xf32>
  exec.output "y3" %y3 {index = 4 : i64} : memref<4x16xf32>
  exec.output "y4" %y4 {index = 5 : i64} : memref<4x16xf32>
  exec.output "y5" %y5 {index = 6 : i64} : memref<4x16xf16>
  exec.output "y6" %y6 {index = 7 : i64} : memref<4x16xf32>
  exec.output "y7" %y7 {index = 8 : i64} : memref<4x16xf32>
  return
}
