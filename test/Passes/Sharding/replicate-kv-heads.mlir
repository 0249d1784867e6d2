// RUN: shardc-opt %s --split-input-file --shardc-replicate-kv-heads | FileCheck %s

// Llama-style grouped-query attention, 4 query heads and 2 kv heads, on
// tp=4: the key and value projections are rebuilt on weights (and biases)
// whose heads repeat twice, so there are 4 kv heads, one per rank; the
// reshape, transpose and rotary chain follows with 4 heads.
// CHECK-LABEL: func.func @gqa_tp4
// CHECK-DAG: %[[WK:.*]] = graph.weight "k_proj.weight" {box_offsets = array<i64: 0, 0>, {{.*}}repeat_blocks = array<i64: 1, 4, 2>, {{.*}}stored_shape = array<i64: 16, 8>} : tensor<16x16xf32>
// CHECK-DAG: %[[BK:.*]] = graph.weight "k_proj.bias" {box_offsets = array<i64: 0>, {{.*}}repeat_blocks = array<i64: 0, 4, 2>, {{.*}}stored_shape = array<i64: 8>} : tensor<16xf32>
// CHECK-DAG: %[[WV:.*]] = graph.weight "v_proj.weight" {{{.*}}repeat_blocks = array<i64: 1, 4, 2>{{.*}}} : tensor<16x16xf32>
// CHECK-DAG: %[[K:.*]] = graph.linear %{{.*}}, %[[WK]], %[[BK]] : (tensor<1x6x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<1x6x16xf32>
// CHECK-DAG: %[[KH:.*]] = graph.reshape %[[K]] : (tensor<1x6x16xf32>) -> tensor<1x6x4x4xf32>
// CHECK-DAG: %[[KT:.*]] = graph.transpose %[[KH]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x4x4xf32>) -> tensor<1x4x6x4xf32>
// CHECK-DAG: %[[KR:.*]] = graph.rotary %[[KT]], %{{.*}}, %{{.*}} : (tensor<1x4x6x4xf32>, tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32>) -> tensor<1x4x6x4xf32>
// CHECK: graph.attention %{{.*}}, %[[KR]], %{{.*}} {causal = true, {{.*}}} : (tensor<1x4x6x4xf32>, tensor<1x4x6x4xf32>, tensor<1x4x6x4xf32>) -> tensor<1x4x6x4xf32>
// CHECK-NOT: tensor<16x8xf32>
module {
  dist.mesh @mesh = <["tp"=4]>
  func.func @gqa_tp4(%x: tensor<1x6x16xf32>, %q: tensor<1x4x6x4xf32>, %cos: tensor<1x1x6x4xf32>, %sin: tensor<1x1x6x4xf32>) -> tensor<1x4x6x4xf32> {
    %wk = graph.weight "k_proj.weight" {file = "m.onnx", offset = 0 : i64, size = 512 : i64} : tensor<16x8xf32>
    %bk = graph.weight "k_proj.bias" {file = "m.onnx", offset = 512 : i64, size = 32 : i64} : tensor<8xf32>
    %wv = graph.weight "v_proj.weight" {file = "m.onnx", offset = 544 : i64, size = 512 : i64} : tensor<16x8xf32>
    %k = graph.linear %x, %wk, %bk : (tensor<1x6x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
    %kh = graph.reshape %k : (tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
    %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
    %kr = graph.rotary %kt, %cos, %sin : (tensor<1x2x6x4xf32>, tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32>) -> tensor<1x2x6x4xf32>
    %v = graph.linear %x, %wv : (tensor<1x6x16xf32>, tensor<16x8xf32>) -> tensor<1x6x8xf32>
    %vh = graph.reshape %v : (tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
    %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
    %a = graph.attention %q, %kr, %vt {causal = true, scale = 0.5 : f64} : (tensor<1x4x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x4x6x4xf32>
    return %a : tensor<1x4x6x4xf32>
  }
}

// -----

// As many kv heads as tp ranks, or no mesh: nothing to replicate.
// CHECK-LABEL: func.func @gqa_tp2
// CHECK-NOT: repeat_blocks
module {
  dist.mesh @mesh = <["tp"=2]>
  func.func @gqa_tp2(%q: tensor<1x4x6x4xf32>, %k: tensor<1x2x6x4xf32>, %v: tensor<1x2x6x4xf32>) -> tensor<1x4x6x4xf32> {
    %a = graph.attention %q, %k, %v {scale = 0.5 : f64} : (tensor<1x4x6x4xf32>, tensor<1x2x6x4xf32>, tensor<1x2x6x4xf32>) -> tensor<1x4x6x4xf32>
    return %a : tensor<1x4x6x4xf32>
  }
}
