// RUN: shardc-opt %s --shardc-shard | FileCheck %s
// RUN: shardc-opt %s --shardc-shard --shardc-partition | FileCheck %s --check-prefix=PART
// RUN: shardc-opt %s --shardc-shard="sequence-parallel=true" --shardc-partition | FileCheck %s --check-prefix=SP

// Two GPT-2 blocks (the gpt2 fixture, raised, composites inlined) on tp=2.
// The search must find Megatron-LM's plan by itself: the fused QKV
// projection is cut into q, k and v, each column-parallel; attention split
// by heads; the output projection row-parallel; the MLP column- then
// row-parallel; norms and the residual stream whole. That is two
// all-reduces per block, and no weight is ever gathered.

// CHECK-LABEL: func.func @main
// CHECK: graph.layer_norm {{.*}}#dist.sharding<@mesh, [{}, {}, {}]>
// CHECK-COUNT-3: graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}, {"tp"}]>
// CHECK: graph.attention {{.*}}#dist.sharding<@mesh, [{}, {"tp"}, {}, {}]>
// CHECK: %[[PROJ:.*]] = graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}, {}], partial={"tp"}>
// CHECK: %[[SUM:.*]] = dist.reshard %[[PROJ]] to <@mesh, [{}, {}, {}]>
// CHECK: graph.add %{{.*}}, %[[SUM]] {{.*}}#dist.sharding<@mesh, [{}, {}, {}]>
// CHECK: graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}, {"tp"}]>
// CHECK: graph.gelu {{.*}}#dist.sharding<@mesh, [{}, {}, {"tp"}]>
// CHECK: %[[DOWN:.*]] = graph.linear {{.*}}#dist.sharding<@mesh, [{}, {}, {}], partial={"tp"}>
// CHECK: dist.reshard %[[DOWN]] to <@mesh, [{}, {}, {}]>

// The per-device program: local shapes, weights cut in halves, exactly two
// all-reduces per block, and one all-gather: the vocabulary-split logits
// made whole for the caller.
// PART-LABEL: func.func @main
// PART-NOT: dist.all_gather
// PART: graph.weight "h.0.attn.c_attn.weight" {{.*}}box_offsets = array<i64: 0, 0>{{.*}}dist.weight_shard = #dist.sharding<@mesh, [{}, {"tp"}]>{{.*}}stored_shape = array<i64: 64, 192>{{.*}} : tensor<64x32xf32>
// PART: graph.attention {{.*}} -> tensor<1x2x16x16xf32>
// PART-NOT: dist.all_gather
// PART-COUNT-2: dist.all_reduce {{.*}} on @mesh ["tp"] : tensor<1x16x64xf32>
// PART-NOT: dist.all_gather
// PART: graph.attention
// PART-NOT: dist.all_gather
// PART-COUNT-2: dist.all_reduce {{.*}} on @mesh ["tp"] : tensor<1x16x64xf32>
// PART-NOT: dist.all_reduce
// PART: dist.all_gather {{.*}} on @mesh ["tp"] dim = 2 : tensor<1x16x128xf32> -> tensor<1x16x256xf32>
// PART-NOT: dist.all_reduce

// With sequence parallelism each all-reduce becomes a reduce-scatter into
// sequence-split activations, and an all-gather before the next block.
// SP-LABEL: func.func @main
// SP-NOT: dist.all_reduce
// SP-COUNT-2: dist.reduce_scatter {{.*}} on @mesh ["tp"] dim = 1 : tensor<1x16x64xf32> -> tensor<1x8x64xf32>
// SP-NOT: dist.all_reduce

module attributes {graph.opset = 14 : i64, graph.producer = "pytorch 1.13.0"} {
  dist.mesh @mesh = <["tp"=2]>
  func.func @main(%arg0: tensor<1x16xi64> {graph.name = "input_ids"}) -> (tensor<1x16x256xf32> {graph.name = "logits"}) {
    %0 = graph.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<1x16xi64>
    %1 = graph.weight "wte.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 17126 : i64, size = 65536 : i64} : tensor<256x64xf32>
    %2 = graph.gather %1, %arg0 {axis = 0 : i64} : (tensor<256x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
    %3 = graph.weight "wpe.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 82686 : i64, size = 8192 : i64} : tensor<32x64xf32>
    %4 = graph.gather %3, %0 {axis = 0 : i64} : (tensor<32x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
    %5 = graph.add %2, %4 : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
    %6 = graph.weight "h.0.ln_1.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 90905 : i64, size = 256 : i64} : tensor<64xf32>
    %7 = graph.weight "h.0.ln_1.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 91186 : i64, size = 256 : i64} : tensor<64xf32>
    %8 = graph.layer_norm %5, %6, %7 {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %9 = graph.weight "h.0.attn.c_attn.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 91481 : i64, size = 49152 : i64} : tensor<64x192xf32>
    %10 = graph.weight "h.0.attn.c_attn.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 140666 : i64, size = 768 : i64} : tensor<192xf32>
    %11 = graph.linear %8, %9, %10 : (tensor<1x16x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<1x16x192xf32>
    %12:3 = graph.split %11 {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<1x16x192xf32>) -> (tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>)
    %13 = graph.reshape %12#0 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %14 = graph.transpose %13 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %15 = graph.reshape %12#1 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %16 = graph.reshape %12#2 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %17 = graph.transpose %16 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %18 = graph.transpose %15 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %19 = graph.attention %14, %18, %17 {causal = true, scale = 2.500000e-01 : f64} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %20 = graph.transpose %19 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %21 = graph.reshape %20 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %22 = graph.weight "h.0.attn.c_proj.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 141472 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %23 = graph.weight "h.0.attn.c_proj.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 157888 : i64, size = 256 : i64} : tensor<64xf32>
    %24 = graph.linear %21, %22, %23 : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %25 = graph.add %5, %24 : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
    %26 = graph.weight "h.0.ln_2.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 158171 : i64, size = 256 : i64} : tensor<64xf32>
    %27 = graph.weight "h.0.ln_2.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 158452 : i64, size = 256 : i64} : tensor<64xf32>
    %28 = graph.layer_norm %25, %26, %27 {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %29 = graph.weight "h.0.mlp.c_fc.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 158744 : i64, size = 65536 : i64} : tensor<64x256xf32>
    %30 = graph.weight "h.0.mlp.c_fc.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 224310 : i64, size = 1024 : i64} : tensor<256xf32>
    %31 = graph.weight "h.0.mlp.c_proj.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 225372 : i64, size = 65536 : i64} : tensor<256x64xf32>
    %32 = graph.weight "h.0.mlp.c_proj.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 290939 : i64, size = 256 : i64} : tensor<64xf32>
    %33 = graph.linear %28, %29, %30 : (tensor<1x16x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x16x256xf32>
    %34 = graph.gelu %33 {approximate_tanh = true} : tensor<1x16x256xf32>
    %35 = graph.linear %34, %31, %32 : (tensor<1x16x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %36 = graph.add %25, %35 : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
    %37 = graph.weight "h.1.ln_1.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 291222 : i64, size = 256 : i64} : tensor<64xf32>
    %38 = graph.weight "h.1.ln_1.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 291503 : i64, size = 256 : i64} : tensor<64xf32>
    %39 = graph.layer_norm %36, %37, %38 {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %40 = graph.weight "h.1.attn.c_attn.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 291798 : i64, size = 49152 : i64} : tensor<64x192xf32>
    %41 = graph.weight "h.1.attn.c_attn.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 340983 : i64, size = 768 : i64} : tensor<192xf32>
    %42 = graph.linear %39, %40, %41 : (tensor<1x16x64xf32>, tensor<64x192xf32>, tensor<192xf32>) -> tensor<1x16x192xf32>
    %43:3 = graph.split %42 {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : (tensor<1x16x192xf32>) -> (tensor<1x16x64xf32>, tensor<1x16x64xf32>, tensor<1x16x64xf32>)
    %44 = graph.reshape %43#0 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %45 = graph.transpose %44 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %46 = graph.reshape %43#1 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %47 = graph.reshape %43#2 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %48 = graph.transpose %47 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %49 = graph.transpose %46 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %50 = graph.attention %45, %49, %48 {causal = true, scale = 2.500000e-01 : f64} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %51 = graph.transpose %50 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %52 = graph.reshape %51 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %53 = graph.weight "h.1.attn.c_proj.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 341789 : i64, size = 16384 : i64} : tensor<64x64xf32>
    %54 = graph.weight "h.1.attn.c_proj.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 358205 : i64, size = 256 : i64} : tensor<64xf32>
    %55 = graph.linear %52, %53, %54 : (tensor<1x16x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %56 = graph.add %36, %55 : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
    %57 = graph.weight "h.1.ln_2.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 358488 : i64, size = 256 : i64} : tensor<64xf32>
    %58 = graph.weight "h.1.ln_2.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 358769 : i64, size = 256 : i64} : tensor<64xf32>
    %59 = graph.layer_norm %56, %57, %58 {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %60 = graph.weight "h.1.mlp.c_fc.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 359061 : i64, size = 65536 : i64} : tensor<64x256xf32>
    %61 = graph.weight "h.1.mlp.c_fc.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 424627 : i64, size = 1024 : i64} : tensor<256xf32>
    %62 = graph.weight "h.1.mlp.c_proj.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 425689 : i64, size = 65536 : i64} : tensor<256x64xf32>
    %63 = graph.weight "h.1.mlp.c_proj.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 491256 : i64, size = 256 : i64} : tensor<64xf32>
    %64 = graph.linear %59, %60, %61 : (tensor<1x16x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<1x16x256xf32>
    %65 = graph.gelu %64 {approximate_tanh = true} : tensor<1x16x256xf32>
    %66 = graph.linear %65, %62, %63 : (tensor<1x16x256xf32>, tensor<256x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %67 = graph.add %56, %66 : (tensor<1x16x64xf32>, tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
    %68 = graph.weight "ln_f.weight" {file = "test/fixtures/models/gpt2.onnx", offset = 491535 : i64, size = 256 : i64} : tensor<64xf32>
    %69 = graph.weight "ln_f.bias" {file = "test/fixtures/models/gpt2.onnx", offset = 491812 : i64, size = 256 : i64} : tensor<64xf32>
    %70 = graph.layer_norm %67, %68, %69 {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
    %71 = graph.weight "onnx::MatMul_310" {file = "test/fixtures/models/gpt2.onnx", offset = 492101 : i64, size = 65536 : i64} : tensor<64x256xf32>
    %72 = graph.linear %70, %71 : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    return %72 : tensor<1x16x256xf32>
  }
}

