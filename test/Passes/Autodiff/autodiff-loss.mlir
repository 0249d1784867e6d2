// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=causal-lm:logits optimizer=sgd" | FileCheck %s
// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=cross-entropy:logits optimizer=sgd" | FileCheck %s --check-prefix=NOSHIFT

// causal-lm: position t predicts label t + 1; labels of -100 are not
// counted; the mean is over the counted tokens. The label's logit is picked
// by a one-hot sum over the vocabulary, so a vocabulary split over tp never
// gathers the logits.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4xf32> {graph.name = "x"}, %[[LABELS:.*]]: tensor<2x3xi64> {graph.name = "labels"}
// CHECK: %[[LOGITS:.*]] = graph.linear %[[X]]
// CHECK: %[[SHIFTED:.*]] = graph.slice %[[LOGITS]] {{.*}}ends = array<i64: 2, 2, 5>,{{.*}} starts = array<i64: 0, 0, 0>,{{.*}} steps = array<i64: 1, 1, 1>{{.*}}}
// CHECK: %[[NEXT:.*]] = graph.slice %[[LABELS]] {{.*}}ends = array<i64: 2, 3>,{{.*}} starts = array<i64: 0, 1>,{{.*}} steps = array<i64: 1, 1>{{.*}}}
// CHECK-DAG: %[[ROWS:.*]] = graph.reshape %[[SHIFTED]] {{.*}}: (tensor<2x2x5xf32>) -> tensor<4x5xf32>
// CHECK-DAG: %[[FLAT:.*]] = graph.reshape %[[NEXT]] {{.*}}: (tensor<2x2xi64>) -> tensor<4xi64>
// CHECK: %[[MAX:.*]] = graph.reduce_max %[[ROWS]] {{.*}}axes = array<i64: 1>,{{.*}} keepdims = true{{.*}}}
// CHECK: %[[CLASSES:.*]] = graph.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
// CHECK: %[[ONEHOT:.*]] = graph.compare eq, %{{.*}}, %[[CLASSES]] {{.*}}: (tensor<4x1xi64>, tensor<5xi64>) -> tensor<4x5xi1>
// CHECK: %[[IGNORE:.*]] = graph.constant dense<-100> : tensor<i64>
// CHECK: %[[IGNORED:.*]] = graph.compare eq, %[[FLAT]], %[[IGNORE]]
// CHECK: %[[COUNTED:.*]] = graph.not %[[IGNORED]]
// CHECK: %[[TOTAL:.*]] = graph.reduce_sum %{{.*}} {{.*}}axes = array<i64: 0>,{{.*}} keepdims = false{{.*}}} : (tensor<4xf32>) -> tensor<f32>
// CHECK: %[[COUNTF:.*]] = graph.cast %[[COUNTED]] {{.*}}: tensor<4xi1> to tensor<4xf32>
// CHECK: %[[COUNT:.*]] = graph.reduce_sum %[[COUNTF]]
// CHECK: %[[LOSS:.*]] = graph.div %[[TOTAL]], %[[COUNT]]
// CHECK: return %[[LOSS]]

// NOSHIFT-LABEL: func.func @main
// NOSHIFT-NOT: graph.slice
// NOSHIFT: graph.reshape %{{.*}} : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
func.func @main(%x: tensor<2x3x4xf32> {graph.name = "x"}) -> (tensor<2x3x5xf32> {graph.name = "logits"}) {
  %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 80 : i64} : tensor<4x5xf32>
  %y = graph.linear %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}
