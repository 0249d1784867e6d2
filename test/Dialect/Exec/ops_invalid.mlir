// RUN: shardc-opt %s --split-input-file --verify-diagnostics

func.func @view_count() {
  %b = exec.alloc : memref<2x4xf32>
  // expected-error @+1 {{must keep the element type and count; expected 8 x 'f32' but got 6 x 'f32'}}
  %v = exec.view %b : memref<2x4xf32> to memref<6xf32>
  return
}

// -----

func.func @write_weight() {
  %x = exec.input "x" {index = 0 : i64} : memref<4xf32>
  %w = exec.weight "w" {file = "m.onnx", offset = 0, size = 16} : memref<4xf32>
  // expected-error @+1 {{output 0 must be an arena buffer or a trained weight's state; weights, constants and inputs are read-only}}
  exec.kernel "neg"(%x) -> (%w) {} {source = ""} : (memref<4xf32>) -> memref<4xf32>
  return
}
