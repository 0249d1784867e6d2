// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y optimizer=sgd lr=0.5" | FileCheck %s --check-prefix=SGD
// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y" | FileCheck %s --check-prefix=ADAM
// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y optimizer=sgd freeze=w" | FileCheck %s --check-prefix=FROZEN
// RUN: shardc-opt %s --split-input-file --shardc-autodiff="loss=mse:y optimizer=sgd sum-gradients=true" | FileCheck %s --check-prefix=SUM

// A linear layer (weight stored out x in, as torch's nn.Linear) under an MSE
// loss: its bias becomes an add after it (a trained bias is never a share of
// a sum, which a row-parallel linear's bias would be); dW = dy^T x over the
// tokens, db = dy summed over the tokens; SGD writes both.
// SGD-LABEL: func.func @main
// SGD-SAME: %[[X:.*]]: tensor<2x4xf32> {graph.name = "x"}, %[[T:.*]]: tensor<2x3xf32> {graph.name = "target"}
// SGD-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<f32> {graph.name = "grad_norm"})
// SGD-DAG: %[[W:.*]] = graph.weight "w" {{{.*}}graph.train = "param"{{.*}}} : tensor<3x4xf32>
// SGD-DAG: %[[B:.*]] = graph.weight "b" {{{.*}}graph.train = "param"{{.*}}} : tensor<3xf32>
// SGD: %[[P:.*]] = graph.linear %[[X]], %[[W]] {{.*}}transpose_weight = true{{.*}}}
// SGD: %[[Y:.*]] = graph.add %[[P]], %[[B]]
// SGD: %[[ERR:.*]] = graph.sub %[[Y]], %[[T]]
// The mean is its sum over its count; the sweep starts from 1 over the
// count (with sum-gradients: from 1, each gradient divided by the count
// once summed, as micro-batches need).
// SGD: %[[TOTAL:.*]] = graph.reduce_sum
// SGD: %[[COUNT:.*]] = graph.constant dense<6.000000e+00> : tensor<f32>
// SGD: %[[LOSS:.*]] = graph.div %[[TOTAL]], %[[COUNT]]
// SGD: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// SGD: %[[SEED:.*]] = graph.div %[[ONE]], %[[COUNT]]
// SGD: graph.reshape %[[SEED]]
// SGD: %[[DB:.*]] = graph.reduce_sum %[[DY:.*]] {{.*}}axes = array<i64: 0>,{{.*}} keepdims = false{{.*}}} : (tensor<2x3xf32>) -> tensor<3xf32>
// SGD: %[[DYT:.*]] = graph.transpose %[[DY]] {{.*}}perm = array<i64: 1, 0>{{.*}}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// SGD: %[[DW:.*]] = graph.matmul %[[DYT]], %[[X]] {{.*}}: (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// SUM: %[[COUNT:.*]] = graph.constant dense<6.000000e+00> : tensor<f32>
// SUM: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// SUM: graph.reshape %[[ONE]]
// SUM: %[[DBS:.*]] = graph.reduce_sum %{{.*}} {{.*}}axes = array<i64: 0>,{{.*}} : (tensor<2x3xf32>) -> tensor<3xf32>
// SUM: %[[DWS:.*]] = graph.matmul
// SUM: %[[DW:.*]] = graph.div %[[DWS]], %[[COUNT]]
// SUM: %[[DB:.*]] = graph.div %[[DBS]], %[[COUNT]]
// SUM: graph.mul %[[DW]], %[[DW]]
// SGD: %[[NORM:.*]] = graph.sqrt
// SGD: %[[STEPW:.*]] = graph.mul %[[DW]], %[[LR:.*]] {{.*}}: (tensor<3x4xf32>, tensor<f32>)
// SGD: %[[NEWW:.*]] = graph.sub %[[W]], %[[STEPW]]
// SGD: %[[STEPB:.*]] = graph.mul %[[DB]], %{{.*}} : (tensor<3xf32>, tensor<f32>)
// SGD: %[[NEWB:.*]] = graph.sub %[[B]], %[[STEPB]]
// SGD: graph.assign %[[W]], %[[NEWW]] {{.*}}: tensor<3x4xf32>
// SGD: graph.assign %[[B]], %[[NEWB]] {{.*}}: tensor<3xf32>
// SGD: return %[[LOSS]], %[[NORM]]

// AdamW keeps two zero-initialised states per parameter, named as torch's
// state_dict names them, and the step counter for the bias correction.
// ADAM-LABEL: func.func @main
// ADAM-DAG: %[[STEP:.*]] = graph.weight "shardc.step" {file = "", graph.train = "state", offset = 0 : i64, size = 4 : i64} : tensor<f32>
// ADAM-DAG: %[[M:.*]] = graph.weight "w.exp_avg" {file = "", graph.train = "state", offset = 0 : i64, size = 48 : i64} : tensor<3x4xf32>
// ADAM-DAG: %[[V:.*]] = graph.weight "w.exp_avg_sq" {file = "", graph.train = "state", offset = 0 : i64, size = 48 : i64} : tensor<3x4xf32>
// ADAM-DAG: graph.weight "b.exp_avg" {{.*}} : tensor<3xf32>
// ADAM-DAG: graph.weight "b.exp_avg_sq" {{.*}} : tensor<3xf32>
// ADAM: graph.pow
// ADAM: graph.assign %[[STEP]]
// ADAM: graph.assign %[[M]]
// ADAM: graph.assign %[[V]]
// ADAM: graph.assign

// A frozen weight is read but never written.
// FROZEN-LABEL: func.func @main
// FROZEN: %[[W:.*]] = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 48 : i64} : tensor<3x4xf32>
// FROZEN-NOT: graph.assign %[[W]]
// FROZEN: graph.assign
// FROZEN-NOT: graph.assign
// FROZEN: return
func.func @main(%x: tensor<2x4xf32> {graph.name = "x"}) -> (tensor<2x3xf32> {graph.name = "y"}) {
  %w = graph.weight "w" {file = "w.bin", offset = 0 : i64, size = 48 : i64} : tensor<3x4xf32>
  %b = graph.weight "b" {file = "w.bin", offset = 48 : i64, size = 12 : i64} : tensor<3xf32>
  %y = graph.linear %x, %w, %b {transpose_weight = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
