// A causal mask that the exporter folded into an initializer (a graph.weight
// whose bytes are in a file) becomes the causal flag like a constant one; a
// weight of other values stays a mask, and one whose bytes cannot be read is
// kept as a mask without an error (its bytes may be absent while planning).
// RUN: printf '\001\000\000\000\001\001\000\000\001\001\001\000\001\001\001\001' > %t.causal
// RUN: printf '\001\001\001\001\001\001\001\001\001\001\001\001\001\001\001\001' > %t.full
// RUN: sed -e "s|CAUSAL_FILE|%t.causal|" -e "s|FULL_FILE|%t.full|" -e "s|MISSING_FILE|%t.missing|" %s \
// RUN:   | shardc-opt --split-input-file --shardc-raise-attention | FileCheck %s

// CHECK-LABEL: func.func @folded_causal
// CHECK: graph.attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = {{.*}}} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
func.func @folded_causal(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %causal = graph.weight "bias" {file = "CAUSAL_FILE", offset = 0 : i64, size = 16 : i64} : tensor<1x1x4x4xi1>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = graph.where %causal, %s, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @folded_full
// CHECK: %[[M:.*]] = graph.weight "bias"
// CHECK: graph.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = {{.*}}}
// CHECK-NOT: causal
func.func @folded_full(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %full = graph.weight "bias" {file = "FULL_FILE", offset = 0 : i64, size = 16 : i64} : tensor<1x1x4x4xi1>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = graph.where %full, %s, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @unreadable
// CHECK: %[[M:.*]] = graph.weight "bias"
// CHECK: graph.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {scale = {{.*}}}
// CHECK-NOT: causal
func.func @unreadable(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = graph.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %mask = graph.weight "bias" {file = "MISSING_FILE", offset = 0 : i64, size = 16 : i64} : tensor<1x1x4x4xi1>
  %min = graph.constant dense<-3.40282347E+38> : tensor<f32>
  %masked = graph.where %mask, %s, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
