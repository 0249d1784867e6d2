// RUN: shardc-opt %s --split-input-file --verify-diagnostics
// Each verifier and shape check rejects bad IR with the concrete numbers.

func.func @matmul_contracting(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{contracting dimensions differ; expected 4 but got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : (tensor<2x4xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{shapes do not broadcast; [2, 3] against [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @element_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+2 {{element types differ; expected f32 but got f16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.mul %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----

func.func @wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{changes the element count; expected 6 ([2, 3]) but got 8 ([4, 2])}}
  %0 = graph.reshape %a : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @expand_shape(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{input does not broadcast to the result; expected a shape that broadcasts to [3, 4] but got [3, 2]}}
  %0 = graph.expand %a : (tensor<3x2xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{changes the shape; expected [3, 2] but got [6]}}
  %0 = graph.cast %a : tensor<3x2xf32> to tensor<6xf16>
  return
}

// -----

func.func @weight_size() {
  // expected-error @+1 {{size does not hold a [4, 4] 'f32' tensor; expected 64 bytes but got 60}}
  %0 = graph.weight "w" {file = "m.onnx", offset = 0, size = 60} : tensor<4x4xf32>
  return
}

// -----

func.func @weight_role() {
  // expected-error @+1 {{graph.train must be "param", "copy", "state" or "accumulator"; got "master"}}
  %0 = graph.weight "w" {file = "m.onnx", graph.train = "master", offset = 0, size = 64} : tensor<4x4xf32>
  return
}

// -----

// A compute-type copy is initialised from its master's bytes: it has a file.
func.func @copy_without_file() {
  // expected-error @+1 {{a state or accumulator weight has no file and every other has one; got file ''}}
  %0 = graph.weight "w.bf16" {file = "", graph.train = "copy", offset = 0, size = 64, stored_type = f32} : tensor<4x4xbf16>
  return
}

// -----

func.func @state_with_file() {
  // expected-error @+1 {{a state or accumulator weight has no file and every other has one; got file 'm.onnx'}}
  %0 = graph.weight "w.exp_avg" {file = "m.onnx", graph.train = "state", offset = 0, size = 64} : tensor<4x4xf32>
  return
}

// -----

func.func @weight_offset() {
  // expected-error @+1 {{offset must not be negative; got -8}}
  %0 = graph.weight "w" {file = "m.onnx", offset = -8, size = 64} : tensor<4x4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{perm is not a permutation of the 2 dims; got [0, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @reduce_axes(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis out of range; expected 0 <= axis < 2 but got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_sum %a {axes = array<i64: 2>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<4xf32>) {
  // expected-error @+2 {{bounds of dim 0 out of range; expected 0 <= start, end <= 4 but got 0, 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.slice %a {starts = array<i64: 0>, ends = array<i64: 5>, steps = array<i64: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{input 1 does not fit along axis 0; expected [2, 3] apart from the axis but got [2, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @split_sizes(%a: tensor<6xf32>) {
  // expected-error @+2 {{sizes must add up to the axis; expected 6 but got 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = graph.split %a {axis = 0 : i64, sizes = array<i64: 2, 3>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  return
}

// -----

func.func @topk_k(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{k out of range; expected 0 <= k <= 3 but got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = graph.topk %a {axis = 1 : i64, k = 4 : i64, largest = true, sorted = true} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  return
}

// -----

func.func @linear_features(%x: tensor<2x8xf32>, %w: tensor<4x16xf32>) {
  // expected-error @+2 {{input features differ from the weight's; expected 4 but got 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.linear %x, %w : (tensor<2x8xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{bias shape differs from the output features; expected [16] but got [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.linear %x, %w, %b : (tensor<2x8xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @norm_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{scale shape does not fit the normalized dims; expected to broadcast to [8] but got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x4x8x16xf32>, %kv: tensor<1x3x8x16xf32>) {
  // expected-error @+2 {{query heads must be a multiple of key/value heads; got 4 and 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.attention %q, %kv, %kv {scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x3x8x16xf32>, tensor<1x3x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<1x4x8x16xf32>, %m: tensor<8x9xi1>) {
  // expected-error @+2 {{mask does not broadcast to the scores; expected [1, 4, 8, 8] but got [8, 9]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.attention %q, %q, %q, %m {scale = 0.25 : f64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<8x9xi1>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @rotary_width(%x: tensor<1x4x8x16xf32>, %c: tensor<1x1x8x18xf32>) {
  // expected-error @+2 {{rotated features must be even, non-zero and at most 16; got 18}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.rotary %x, %c, %c : (tensor<1x4x8x16xf32>, tensor<1x1x8x18xf32>, tensor<1x1x8x18xf32>) -> tensor<1x4x8x16xf32>
  return
}

// -----

func.func @composite_yield(%x: tensor<2xf32>) {
  // expected-error @+1 {{yields 1 values whose types differ from the results}}
  %0 = graph.composite "mlp"(%x) : (tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<2xf32>):
    graph.yield %a : tensor<2xf32>
  }
  return
}

// -----

func.func @static_shapes(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = graph.neg %a : tensor<?x3xf32>
  return
}

// -----

func.func @repeat_without_box() -> tensor<4x8xf32> {
  // expected-error @+1 {{repeat_blocks needs stored_shape and box_offsets}}
  %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 64 : i64, repeat_blocks = array<i64: 1, 2, 2>} : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

func.func @repeat_bad_axis() -> tensor<4x8xf32> {
  // expected-error @+1 {{repeat_blocks must be [axis, block, times] with an axis of the result and positive block and times; got [2, 2, 2] for [4, 8]}}
  %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 64 : i64, stored_shape = array<i64: 4, 4>, box_offsets = array<i64: 0, 0>, repeat_blocks = array<i64: 2, 2, 2>} : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

func.func @repeat_box_too_wide() -> tensor<4x16xf32> {
  // expected-error @+1 {{box of [4, 8] at [0, 0] does not fit in the stored [4, 4]}}
  %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 64 : i64, stored_shape = array<i64: 4, 4>, box_offsets = array<i64: 0, 0>, repeat_blocks = array<i64: 1, 2, 2>} : tensor<4x16xf32>
  return %w : tensor<4x16xf32>
}

// -----

func.func @moe_down_width(%x: tensor<8x16xf32>, %i: tensor<8x2xi64>, %g: tensor<8x2xf32>, %up: tensor<4x16x32xf32>, %down: tensor<4x16x16xf32>) {
  // expected-error @+2 {{the down projection does not fit hidden size 16 and expert width 32; got [4, 16, 16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.moe %x, %i, %g, experts(%up, %down) {experts = 4 : i64, activation = "relu"} : (tensor<8x16xf32>, tensor<8x2xi64>, tensor<8x2xf32>, tensor<4x16x32xf32>, tensor<4x16x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @moe_experts_split(%x: tensor<8x16xf32>, %i: tensor<8x2xi64>, %g: tensor<8x2xf32>, %up: tensor<3x16x32xf32>, %down: tensor<3x32x16xf32>) {
  // expected-error @+2 {{expects 1 <= k <= experts and the weights' expert dim to divide experts; got k = 2, experts = 4, weights for 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.moe %x, %i, %g, experts(%up, %down) {experts = 4 : i64, activation = "relu"} : (tensor<8x16xf32>, tensor<8x2xi64>, tensor<8x2xf32>, tensor<3x16x32xf32>, tensor<3x32x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @moe_activation(%x: tensor<8x16xf32>, %i: tensor<8x2xi64>, %g: tensor<8x2xf32>, %up: tensor<4x16x32xf32>, %down: tensor<4x32x16xf32>) {
  // expected-error @+2 {{activation must be silu, gelu, gelu_tanh or relu; got 'tanh'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.moe %x, %i, %g, experts(%up, %down) {experts = 4 : i64, activation = "tanh"} : (tensor<8x16xf32>, tensor<8x2xi64>, tensor<8x2xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @moe_tokens(%x: tensor<8x16xf32>, %i: tensor<6x2xi64>, %g: tensor<6x2xf32>, %up: tensor<4x16x32xf32>, %down: tensor<4x32x16xf32>) {
  // expected-error @+2 {{expects input [T, H] with indices and gates [T, k]; got [8, 16], [6, 2] and [6, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.moe %x, %i, %g, experts(%up, %down) {experts = 4 : i64, activation = "relu"} : (tensor<8x16xf32>, tensor<6x2xi64>, tensor<6x2xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<8x16xf32>
  return
}
