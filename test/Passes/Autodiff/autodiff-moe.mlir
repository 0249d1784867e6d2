// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y optimizer=sgd" | FileCheck %s

// graph.moe's gradient (VjpRouting.cpp) is that of its dense equivalent:
// every expert on every token, scaled by a combine weight that is the gate
// where the token chose the expert and 0 elsewhere, so an expert gets no
// gradient from a token that did not choose it. The gates' gradient is
// <dy, expert_e(x)> taken at each slot's chosen expert only. Dropless: no
// capacity count.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>{{.*}}%[[IDX:[^:]*]]: tensor<2x2xi64>
// CHECK: %[[GATES:.*]] = graph.weight "gates"
// CHECK: %[[WG:.*]] = graph.weight "wg"
// CHECK: %[[WU:.*]] = graph.weight "wu"
// CHECK: %[[WD:.*]] = graph.weight "wd"
// CHECK: graph.moe
// CHECK-NOT: graph.cumsum
// CHECK: %[[IOTA:.*]] = graph.constant dense<{{\[\[\[}}0, 1, 2]]]> : tensor<1x1x3xi64>
// CHECK: %[[COLUMN:.*]] = graph.reshape %[[IDX]] {{.*}}-> tensor<2x2x1xi64>
// CHECK: %[[HIT:.*]] = graph.compare eq, %[[COLUMN]], %[[IOTA]]
// CHECK: %[[CHOICES:.*]] = graph.cast %[[HIT]] {{.*}}to tensor<2x2x3xf32>
// CHECK: %[[GATES3:.*]] = graph.reshape %[[GATES]] {{.*}}-> tensor<2x2x1xf32>
// CHECK: %[[WEIGHTED:.*]] = graph.mul %[[GATES3]], %[[CHOICES]]
// CHECK: %[[COMBINE:.*]] = graph.reduce_sum %[[WEIGHTED]] {axes = array<i64: 1>{{.*}}-> tensor<2x3xf32>
// CHECK: %[[COMBINE_T:.*]] = graph.transpose %[[COMBINE]]
// CHECK: %[[PER_EXPERT:.*]] = graph.reshape %[[COMBINE_T]] {{.*}}-> tensor<3x2x1xf32>
// CHECK: %[[UP:.*]] = graph.matmul %[[X]], %[[WU]] {{.*}}: (tensor<2x4xf32>, tensor<3x4x3xf32>) -> tensor<3x2x3xf32>
// CHECK: %[[GATE:.*]] = graph.matmul %[[X]], %[[WG]]
// CHECK: %[[ACT:.*]] = graph.silu %[[GATE]]
// CHECK: %[[HIDDEN:.*]] = graph.mul %[[ACT]], %[[UP]]
// CHECK: %[[OUT:.*]] = graph.matmul %[[HIDDEN]], %[[WD]] {{.*}}-> tensor<3x2x4xf32>
// CHECK: %[[DY:.*]] = graph.expand {{.*}}-> tensor<3x2x4xf32>
// CHECK: %[[DOT:.*]] = graph.mul %[[DY]], %[[OUT]]
// CHECK: %[[DOUT:.*]] = graph.mul %[[DY]], %[[PER_EXPERT]]
// CHECK: %[[DCOMBINE:.*]] = graph.reduce_sum %[[DOT]] {axes = array<i64: 2>{{.*}}-> tensor<3x2xf32>
// CHECK: %[[HIDDEN_T:.*]] = graph.transpose %[[HIDDEN]]
// CHECK: %[[DWD:.*]] = graph.matmul %[[HIDDEN_T]], %[[DOUT]] {{.*}}-> tensor<3x3x4xf32>
// CHECK: %[[XT:.*]] = graph.transpose %[[X]]
// CHECK: %[[DWG:.*]] = graph.matmul %[[XT]], %{{.*}} : (tensor<4x2xf32>, tensor<3x2x3xf32>) -> tensor<3x4x3xf32>
// CHECK: %[[XT2:.*]] = graph.transpose %[[X]]
// CHECK: %[[DWU:.*]] = graph.matmul %[[XT2]], %{{.*}} : (tensor<4x2xf32>, tensor<3x2x3xf32>) -> tensor<3x4x3xf32>
// CHECK: %[[PICKED:.*]] = graph.mul %{{.*}}, %[[CHOICES]] {{.*}}-> tensor<2x2x3xf32>
// CHECK: %[[DGATES:.*]] = graph.reduce_sum %[[PICKED]] {axes = array<i64: 2>{{.*}}-> tensor<2x2xf32>
// CHECK: graph.assign %[[GATES]]
// CHECK: graph.assign %[[WG]]
// CHECK: graph.assign %[[WU]]
// CHECK: graph.assign %[[WD]]
func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}, %idx: tensor<2x2xi64> {graph.name = "idx"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
  %gates = graph.weight "gates" {file = "w.bin", offset = 0 : i64, size = 16 : i64} : tensor<2x2xf32>
  %wg = graph.weight "wg" {file = "w.bin", offset = 16 : i64, size = 144 : i64} : tensor<3x4x3xf32>
  %wu = graph.weight "wu" {file = "w.bin", offset = 160 : i64, size = 144 : i64} : tensor<3x4x3xf32>
  %wd = graph.weight "wd" {file = "w.bin", offset = 304 : i64, size = 144 : i64} : tensor<3x3x4xf32>
  %y = graph.moe %x, %idx, %gates, experts(%wg, %wu, %wd) {experts = 3 : i64, activation = "silu"} : (tensor<2x4xf32>, tensor<2x2xi64>, tensor<2x2xf32>, tensor<3x4x3xf32>, tensor<3x4x3xf32>, tensor<3x3x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// With a capacity, an entry is kept while its expert's running count of
// entries, in (token, slot) order, is within it (docs/experts.md): a
// dropped entry's combine weight is 0, so it gets no gradient through the
// experts. Weights stored out x in are transposed for the dense matmuls.
// The router's top-k hands its values' gradient back to the positions they
// came from (a scatter-add into zeros), then through the softmax.
// CHECK-LABEL: func.func @main
// CHECK: %[[VALUES:.*]], %[[INDICES:.*]] = graph.topk
// CHECK: %[[CHOICES:.*]] = graph.cast %{{.*}} to tensor<2x2x3xf32>
// CHECK: %[[FLAT:.*]] = graph.reshape %[[CHOICES]] {{.*}}-> tensor<4x3xf32>
// CHECK: %[[RANK:.*]] = graph.cumsum %[[FLAT]] {axis = 0 : i64
// CHECK: %[[CAPACITY:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[WITHIN:.*]] = graph.compare le, %[[RANK]], %[[CAPACITY]]
// CHECK: %[[WITHIN_F:.*]] = graph.cast %[[WITHIN]]
// CHECK: %[[KEPT:.*]] = graph.mul %[[FLAT]], %[[WITHIN_F]]
// CHECK: %[[KEPT3:.*]] = graph.reshape %[[KEPT]] {{.*}}-> tensor<2x2x3xf32>
// CHECK: %[[VALUES3:.*]] = graph.reshape %[[VALUES]]
// CHECK: graph.mul %[[VALUES3]], %[[KEPT3]]
// CHECK: %[[UP_IN_OUT:.*]] = graph.transpose %{{.*}} {{.*}}: (tensor<3x3x4xf32>) -> tensor<3x4x3xf32>
// CHECK: graph.matmul %{{.*}}, %[[UP_IN_OUT]]
// CHECK: graph.gelu
// CHECK: graph.mul %{{.*}}, %[[KEPT3]] {{.*}}-> tensor<2x2x3xf32>
// CHECK: %[[ZEROS:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: %[[DPROBS:.*]] = graph.scatter_elements %[[ZEROS]], %[[INDICES]], %{{.*}} {axis = 1 : i64{{.*}}reduction = 1 : i32}
// CHECK: graph.mul %[[DPROBS]]
func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}) -> (tensor<2x4xf32> {graph.name = "y"}) {
  %router = graph.weight "router" {file = "w.bin", offset = 0 : i64, size = 48 : i64} : tensor<4x3xf32>
  %up = graph.weight "up" {file = "w.bin", offset = 48 : i64, size = 144 : i64} : tensor<3x3x4xf32>
  %down = graph.weight "down" {file = "w.bin", offset = 192 : i64, size = 144 : i64} : tensor<3x4x3xf32>
  %logits = graph.linear %x, %router : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %probs = graph.softmax %logits {axis = 1 : i64} : tensor<2x3xf32>
  %top, %index = graph.topk %probs {axis = 1 : i64, k = 2 : i64, largest = true, sorted = true} : (tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  %y = graph.moe %x, %index, %top, experts(%up, %down) {experts = 3 : i64, activation = "gelu", transpose_weights = true, capacity = 1 : i64} : (tensor<2x4xf32>, tensor<2x2xi64>, tensor<2x2xf32>, tensor<3x3x4xf32>, tensor<3x4x3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
