// RUN: shardc-opt %s --split-input-file --shardc-split-fused-projections | FileCheck %s

// GPT-2's fused QKV projection: the output is only split into q, k and v, so
// each part becomes its own linear layer on a box of the weight and bias.
// CHECK-LABEL: func.func @fused_qkv
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-NOT: tensor<16x48xf32>
// CHECK-DAG: %[[WQ:.*]] = graph.weight "c_attn.weight" {box_offsets = array<i64: 0, 0>, {{.*}}stored_shape = array<i64: 16, 48>} : tensor<16x16xf32>
// CHECK-DAG: %[[BQ:.*]] = graph.weight "c_attn.bias" {box_offsets = array<i64: 0>, {{.*}}stored_shape = array<i64: 48>} : tensor<16xf32>
// CHECK-DAG: %[[WV:.*]] = graph.weight "c_attn.weight" {box_offsets = array<i64: 0, 32>, {{.*}} : tensor<16x16xf32>
// CHECK-DAG: %[[Q:.*]] = graph.linear %[[X]], %[[WQ]], %[[BQ]]
// CHECK-DAG: %[[V:.*]] = graph.linear %[[X]], %[[WV]], %{{.*}}
// CHECK-NOT: graph.split
// CHECK: return %[[Q]], %{{.*}}, %[[V]]
func.func @fused_qkv(%x: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>) {
  %w = graph.weight "c_attn.weight" {file = "m.onnx", offset = 0 : i64, size = 3072 : i64} : tensor<16x48xf32>
  %b = graph.weight "c_attn.bias" {file = "m.onnx", offset = 3072 : i64, size = 192 : i64} : tensor<48xf32>
  %0 = graph.linear %x, %w, %b : (tensor<2x8x16xf32>, tensor<16x48xf32>, tensor<48xf32>) -> tensor<2x8x48xf32>
  %1:3 = graph.split %0 {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : (tensor<2x8x48xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>)
  return %1#0, %1#1, %1#2 : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32>
}

// -----

// nn.MultiheadAttention's in-projection: a transposed weight [3e, e] sliced
// three ways; each slice of the output becomes rows of the weight.
// CHECK-LABEL: func.func @sliced_transposed
// CHECK-NOT: tensor<24x8xf32>
// CHECK-DAG: %[[W0:.*]] = graph.weight "in_proj" {box_offsets = array<i64: 0, 0>, {{.*}}stored_shape = array<i64: 24, 8>} : tensor<8x8xf32>
// CHECK-DAG: %[[W1:.*]] = graph.weight "in_proj" {box_offsets = array<i64: 8, 0>, {{.*}} : tensor<16x8xf32>
// CHECK-DAG: %[[Y0:.*]] = graph.linear %{{.*}}, %[[W0]] {transpose_weight = true}
// CHECK-DAG: %[[Y1:.*]] = graph.linear %{{.*}}, %[[W1]] {transpose_weight = true}
// CHECK-NOT: graph.slice
// CHECK: return %[[Y0]], %[[Y1]]
func.func @sliced_transposed(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x16xf32>) {
  %w = graph.weight "in_proj" {file = "m.onnx", offset = 0 : i64, size = 768 : i64} : tensor<24x8xf32>
  %0 = graph.linear %x, %w {transpose_weight = true} : (tensor<4x8xf32>, tensor<24x8xf32>) -> tensor<4x24xf32>
  %1 = graph.slice %0 {starts = array<i64: 0, 0>, ends = array<i64: 4, 8>, steps = array<i64: 1, 1>} : (tensor<4x24xf32>) -> tensor<4x8xf32>
  %2 = graph.slice %0 {starts = array<i64: 0, 8>, ends = array<i64: 4, 24>, steps = array<i64: 1, 1>} : (tensor<4x24xf32>) -> tensor<4x16xf32>
  return %1, %2 : tensor<4x8xf32>, tensor<4x16xf32>
}

// -----

// An output also used whole stays one layer.
// CHECK-LABEL: func.func @used_whole
// CHECK: graph.linear
// CHECK-NOT: graph.linear
// CHECK: graph.split
func.func @used_whole(%x: tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %w = graph.weight "w" {file = "m.onnx", offset = 0 : i64, size = 256 : i64} : tensor<8x8xf32>
  %0 = graph.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1:2 = graph.split %0 {axis = 1 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return %1#0, %0 : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// Falcon's fused query_key_value viewed as heads [.., 6, 4]: the queries are
// a slice of heads 0..3, the key and the value heads gathers of heads 4 and
// 5. Each becomes its own linear on those heads' columns, viewed as heads.
// CHECK-LABEL: func.func @fused_heads
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-DAG: %[[WQ:.*]] = graph.weight "qkv" {box_offsets = array<i64: 0, 0>, {{.*}}stored_shape = array<i64: 16, 24>} : tensor<16x16xf32>
// CHECK-DAG: %[[WK:.*]] = graph.weight "qkv" {box_offsets = array<i64: 0, 16>, {{.*}}stored_shape = array<i64: 16, 24>} : tensor<16x4xf32>
// CHECK-DAG: %[[WV:.*]] = graph.weight "qkv" {box_offsets = array<i64: 0, 20>, {{.*}}stored_shape = array<i64: 16, 24>} : tensor<16x4xf32>
// CHECK-DAG: %[[Q:.*]] = graph.linear %[[X]], %[[WQ]] : (tensor<2x8x16xf32>, tensor<16x16xf32>) -> tensor<2x8x16xf32>
// CHECK-DAG: %[[QH:.*]] = graph.reshape %[[Q]] : (tensor<2x8x16xf32>) -> tensor<2x8x4x4xf32>
// CHECK-DAG: %[[K:.*]] = graph.linear %[[X]], %[[WK]] : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
// CHECK-DAG: %[[KH:.*]] = graph.reshape %[[K]] : (tensor<2x8x4xf32>) -> tensor<2x8x1x4xf32>
// CHECK-DAG: %[[V:.*]] = graph.linear %[[X]], %[[WV]]
// CHECK-NOT: graph.gather
// CHECK: return %[[QH]], %[[KH]], %{{.*}}
func.func @fused_heads(%x: tensor<2x8x16xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8x1x4xf32>, tensor<2x8x1x4xf32>) {
  %w = graph.weight "qkv" {file = "m.onnx", offset = 0 : i64, size = 1536 : i64} : tensor<16x24xf32>
  %0 = graph.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x24xf32>) -> tensor<2x8x24xf32>
  %1 = graph.reshape %0 : (tensor<2x8x24xf32>) -> tensor<2x8x6x4xf32>
  %q = graph.slice %1 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 2, 8, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x8x6x4xf32>) -> tensor<2x8x4x4xf32>
  %i4 = graph.constant dense<[4]> : tensor<1xi64>
  %i5 = graph.constant dense<[-1]> : tensor<1xi64>
  %k = graph.gather %1, %i4 {axis = 2 : i64} : (tensor<2x8x6x4xf32>, tensor<1xi64>) -> tensor<2x8x1x4xf32>
  %v = graph.gather %1, %i5 {axis = 2 : i64} : (tensor<2x8x6x4xf32>, tensor<1xi64>) -> tensor<2x8x1x4xf32>
  return %q, %k, %v : tensor<2x8x4x4xf32>, tensor<2x8x1x4xf32>, tensor<2x8x1x4xf32>
}

// -----

// The dynamo export of Falcon moves the heads of the view to dim 0 and takes
// the key and value heads with gather_nd: each piece is viewed and moved the
// same way.
// CHECK-LABEL: func.func @fused_heads_moved
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>)
// CHECK-DAG: %[[WK:.*]] = graph.weight "qkv" {box_offsets = array<i64: 0, 16>, {{.*}}} : tensor<16x4xf32>
// CHECK-DAG: %[[K:.*]] = graph.linear %[[X]], %[[WK]] : (tensor<2x8x16xf32>, tensor<16x4xf32>) -> tensor<2x8x4xf32>
// CHECK-DAG: %[[KH:.*]] = graph.reshape %[[K]] : (tensor<2x8x4xf32>) -> tensor<2x8x1x4xf32>
// CHECK-DAG: %[[KM:.*]] = graph.transpose %[[KH]] {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x8x1x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK-NOT: graph.gather_nd
// CHECK: return %{{.*}}, %[[KM]], %{{.*}}
func.func @fused_heads_moved(%x: tensor<2x8x16xf32>) -> (tensor<2x8x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %w = graph.weight "qkv" {file = "m.onnx", offset = 0 : i64, size = 1536 : i64} : tensor<16x24xf32>
  %0 = graph.linear %x, %w : (tensor<2x8x16xf32>, tensor<16x24xf32>) -> tensor<2x8x24xf32>
  %1 = graph.reshape %0 : (tensor<2x8x24xf32>) -> tensor<2x8x6x4xf32>
  %q = graph.slice %1 {starts = array<i64: 0, 0, 0, 0>, ends = array<i64: 2, 8, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<2x8x6x4xf32>) -> tensor<2x8x4x4xf32>
  %m = graph.transpose %1 {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x8x6x4xf32>) -> tensor<6x2x8x4xf32>
  %i4 = graph.constant dense<[[4]]> : tensor<1x1xi64>
  %i5 = graph.constant dense<[[5]]> : tensor<1x1xi64>
  %k = graph.gather_nd %m, %i4 : (tensor<6x2x8x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  %v = graph.gather_nd %m, %i5 : (tensor<6x2x8x4xf32>, tensor<1x1xi64>) -> tensor<1x2x8x4xf32>
  return %q, %k, %v : tensor<2x8x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// Batched experts (transformers 5's Mixtral with batched_mm): each token's
// fused gate_up matrices [E, 2F, H] gathered by expert id and applied as
// [T, 2F, H] x [T, H, 1], viewed [T, 2F] and split into gate and up. Each
// part gathers its own box of the weight.
// CHECK-LABEL: func.func @gathered_experts
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x8x1xf32>, %[[IDS:[^:]*]]: tensor<6x1xi64>)
// CHECK-DAG: %[[WG:.*]] = graph.weight "gate_up" {box_offsets = array<i64: 0, 0, 0>, {{.*}}stored_shape = array<i64: 4, 10, 8>{{.*}}} : tensor<4x5x8xf32>
// CHECK-DAG: %[[WU:.*]] = graph.weight "gate_up" {box_offsets = array<i64: 0, 5, 0>, {{.*}}stored_shape = array<i64: 4, 10, 8>{{.*}}} : tensor<4x5x8xf32>
// CHECK-DAG: %[[G:.*]] = graph.gather_nd %[[WG]], %[[IDS]] : (tensor<4x5x8xf32>, tensor<6x1xi64>) -> tensor<6x5x8xf32>
// CHECK-DAG: %[[GM:.*]] = graph.matmul %[[G]], %[[X]] : (tensor<6x5x8xf32>, tensor<6x8x1xf32>) -> tensor<6x5x1xf32>
// CHECK-DAG: %[[GATE:.*]] = graph.reshape %[[GM]] : (tensor<6x5x1xf32>) -> tensor<6x5xf32>
// CHECK-DAG: %[[U:.*]] = graph.gather_nd %[[WU]], %[[IDS]]
// CHECK-DAG: %[[UM:.*]] = graph.matmul %[[U]], %[[X]]
// CHECK-DAG: %[[UP:.*]] = graph.reshape %[[UM]] : (tensor<6x5x1xf32>) -> tensor<6x5xf32>
// CHECK-NOT: graph.split
// CHECK: return %[[GATE]], %[[UP]]
func.func @gathered_experts(%x: tensor<6x8x1xf32>, %ids: tensor<6x1xi64>) -> (tensor<6x5xf32>, tensor<6x5xf32>) {
  %w = graph.weight "gate_up" {file = "m.onnx", offset = 0 : i64, size = 1280 : i64} : tensor<4x10x8xf32>
  %g = graph.gather_nd %w, %ids : (tensor<4x10x8xf32>, tensor<6x1xi64>) -> tensor<6x10x8xf32>
  %p = graph.matmul %g, %x : (tensor<6x10x8xf32>, tensor<6x8x1xf32>) -> tensor<6x10x1xf32>
  %v = graph.reshape %p : (tensor<6x10x1xf32>) -> tensor<6x10xf32>
  %parts:2 = graph.split %v {axis = 1 : i64, sizes = array<i64: 5, 5>} : (tensor<6x10xf32>) -> (tensor<6x5xf32>, tensor<6x5xf32>)
  return %parts#0, %parts#1 : tensor<6x5xf32>, tensor<6x5xf32>
}
