// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y optimizer=sgd" | FileCheck %s

// An embedding lookup's gradient adds each token's row into the rows it read.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IDS:.*]]: tensor<2x3xi64>
// CHECK: %[[TABLE:.*]] = graph.weight "wte"
// CHECK: %[[TUPLES:.*]] = graph.reshape %[[IDS]] {{.*}}: (tensor<2x3xi64>) -> tensor<2x3x1xi64>
// CHECK: %[[ZEROS:.*]] = graph.constant dense<0.000000e+00> : tensor<5x4xf32>
// CHECK: %[[DTABLE:.*]] = graph.scatter_nd %[[ZEROS]], %[[TUPLES]], %{{.*}} {{.*}}reduction = 1 : i32{{.*}}} : (tensor<5x4xf32>, tensor<2x3x1xi64>, tensor<2x3x4xf32>) -> tensor<5x4xf32>
// CHECK: graph.assign %[[TABLE]]
func.func @main(%ids: tensor<2x3xi64> {graph.name = "ids"}) -> (tensor<2x3x4xf32> {graph.name = "y"}) {
  %table = graph.weight "wte" {file = "w.bin", offset = 0 : i64, size = 80 : i64} : tensor<5x4xf32>
  %y = graph.gather %table, %ids {axis = 0 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Grouped-query attention: the probabilities are recomputed from q and k
// (causal mask included), and the kv heads' gradients summed over each group.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[Q:.*]] = graph.weight "q"
// CHECK-DAG: %[[K:.*]] = graph.weight "k"
// CHECK-DAG: %[[V:.*]] = graph.weight "v"
// CHECK: %[[KX:.*]] = graph.expand %{{.*}} : (tensor<1x2x1x3x2xf32>) -> tensor<1x2x2x3x2xf32>
// CHECK: %[[S:.*]] = graph.matmul %[[Q]], %{{.*}} : (tensor<1x4x3x2xf32>, tensor<1x4x2x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK: %[[CAUSAL:.*]] = graph.constant dense<{{\[\[}}true, false, false], [true, true, false], [true, true, true]]> : tensor<3x3xi1>
// CHECK: graph.where %[[CAUSAL]]
// CHECK: %[[P:.*]] = graph.softmax %{{.*}} {{.*}}axis = 3 : i64{{.*}}} : tensor<1x4x3x3xf32>
// CHECK: graph.reduce_sum %{{.*}} {{.*}}axes = array<i64: 2>,{{.*}} keepdims = false{{.*}}} : (tensor<1x2x2x3x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK: graph.assign %[[Q]]
// CHECK: graph.assign %[[K]]
// CHECK: graph.assign %[[V]]
func.func @main() -> (tensor<1x4x3x2xf32> {graph.name = "y"}) {
  %q = graph.weight "q" {file = "w.bin", offset = 0 : i64, size = 96 : i64} : tensor<1x4x3x2xf32>
  %k = graph.weight "k" {file = "w.bin", offset = 96 : i64, size = 48 : i64} : tensor<1x2x3x2xf32>
  %v = graph.weight "v" {file = "w.bin", offset = 144 : i64, size = 48 : i64} : tensor<1x2x3x2xf32>
  %y = graph.attention %q, %k, %v {scale = 0.5 : f64, causal = true} : (tensor<1x4x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x4x3x2xf32>
  return %y : tensor<1x4x3x2xf32>
}

// -----

// Layer norm recomputes its statistics; the scale's gradient sums dy * x^
// over the tokens, the bias's dy.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = graph.weight "x"
// CHECK: %[[MEAN:.*]] = graph.reduce_mean %[[X]] {{.*}}axes = array<i64: 1>,{{.*}} keepdims = true{{.*}}}
// CHECK: %[[CENTERED:.*]] = graph.sub %[[X]], %[[MEAN]]
// CHECK: %[[RSTD:.*]] = graph.rsqrt
// CHECK: %[[XHAT:.*]] = graph.mul %[[CENTERED]], %[[RSTD]]
// CHECK: graph.mul %[[DY:.*]], %[[XHAT]]
// CHECK: graph.reduce_sum %{{.*}} {{.*}}axes = array<i64: 0>,{{.*}} keepdims = false{{.*}}} : (tensor<2x4xf32>) -> tensor<4xf32>
// CHECK: graph.assign %[[X]]
func.func @main() -> (tensor<2x4xf32> {graph.name = "y"}) {
  %x = graph.weight "x" {file = "w.bin", offset = 0 : i64, size = 32 : i64} : tensor<2x4xf32>
  %g = graph.weight "g" {file = "w.bin", offset = 32 : i64, size = 16 : i64} : tensor<4xf32>
  %b = graph.weight "b" {file = "w.bin", offset = 48 : i64, size = 16 : i64} : tensor<4xf32>
  %y = graph.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A rotation's transpose rotates by the partner's negated sine.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[COS:.*]]: tensor<3x4xf32> {graph.name = "cos"}, %[[SIN:.*]]: tensor<3x4xf32> {graph.name = "sin"}
// CHECK: %[[HALVES:.*]]:2 = graph.split %[[SIN]] {{.*}}axis = 1 : i64,{{.*}} sizes = array<i64: 2, 2>{{.*}}}
// CHECK: %[[SWAPPED:.*]] = graph.concat %[[HALVES]]#1, %[[HALVES]]#0 {{.*}}axis = 1 : i64{{.*}}}
// CHECK: %[[NEG:.*]] = graph.neg %[[SWAPPED]]
// CHECK: graph.rotary %{{.*}}, %[[COS]], %[[NEG]]
func.func @main(%cos: tensor<3x4xf32> {graph.name = "cos"}, %sin: tensor<3x4xf32> {graph.name = "sin"}) -> (tensor<1x2x3x4xf32> {graph.name = "y"}) {
  %x = graph.weight "x" {file = "w.bin", offset = 0 : i64, size = 96 : i64} : tensor<1x2x3x4xf32>
  %y = graph.rotary %x, %cos, %sin : (tensor<1x2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<1x2x3x4xf32>
  return %y : tensor<1x2x3x4xf32>
}

// -----

// A strided slice (GPT-J's odd features): the gradient is spread back to
// every second element, zeros between, then padded to the input's size.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = graph.weight "x"
// CHECK: %[[COLUMN:.*]] = graph.reshape %[[DY:.*]] {{.*}}: (tensor<2x3xf32>) -> tensor<2x3x1xf32>
// CHECK: %[[GAPS:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3x1xf32>
// CHECK: %[[PAIRS:.*]] = graph.concat %[[COLUMN]], %[[GAPS]] {{.*}}axis = 2 : i64{{.*}}} : (tensor<2x3x1xf32>, tensor<2x3x1xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[PAIRS]] {{.*}}: (tensor<2x3x2xf32>) -> tensor<2x6xf32>
// CHECK: %[[SPREAD:.*]] = graph.slice %[[FLAT]] {{.*}}ends = array<i64: 2, 5>,{{.*}} starts = array<i64: 0, 0>,{{.*}} steps = array<i64: 1, 1>{{.*}}}
// CHECK: %[[BEFORE:.*]] = graph.constant dense<0.000000e+00> : tensor<2x1xf32>
// CHECK: %[[DX:.*]] = graph.concat %[[BEFORE]], %[[SPREAD]] {{.*}}axis = 1 : i64{{.*}}} : (tensor<2x1xf32>, tensor<2x5xf32>) -> tensor<2x6xf32>
// CHECK: graph.mul %[[DX]], %{{.*}} : (tensor<2x6xf32>, tensor<f32>)
func.func @main() -> (tensor<2x3xf32> {graph.name = "y"}) {
  %x = graph.weight "x" {file = "w.bin", offset = 0 : i64, size = 48 : i64} : tensor<2x6xf32>
  %y = graph.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 6>, steps = array<i64: 1, 2>} : (tensor<2x6xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
