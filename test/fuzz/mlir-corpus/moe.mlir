// RUN: shardc-opt %s --shardc-set-moe-capacity=factor=1.0 | FileCheck %s --check-prefix=ONE
// RUN: shardc-opt %s --shardc-set-moe-capacity=factor=0.01 | FileCheck %s --check-prefix=LEAST
// RUN: shardc-opt %s --shardc-set-moe-capacity=factor=1e19 | FileCheck %s --check-prefix=HUGE
// RUN: shardc-opt %s --shardc-set-moe-capacity=factor=1.7976931348623157e308 | FileCheck %s --check-prefix=HUGE

// 32 tokens x 2 choices = 64 entries over 8 experts: ceil(F * 8) each, at
// least 1, at most all 64 (a factor whose product overflows an int64 keeps
// every entry, as a large one must, not 1).
// ONE: graph.moe {{.*}}capacity = 8 : i64
// LEAST: graph.moe {{.*}}capacity = 1 : i64
// HUGE: graph.moe {{.*}}capacity = 64 : i64
module {
  func.func @main(%rows: tensor<32x64xf32>, %index: tensor<32x2xi64>, %top: tensor<32x2xf32>) -> tensor<32x64xf32> {
    %gate = graph.weight "gate.stacked" {file = "w.bin", offset = 0 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
    %up = graph.weight "up.stacked" {file = "w.bin", offset = 262144 : i64, size = 262144 : i64} : tensor<8x64x128xf32>
    %down = graph.weight "down.stacked" {file = "w.bin", offset = 524288 : i64, size = 262144 : i64} : tensor<8x128x64xf32>
    %y = graph.moe %rows, %index, %top, experts(%gate, %up, %down) {experts = 8 : i64, activation = "silu"} : (tensor<32x64xf32>, tensor<32x2xi64>, tensor<32x2xf32>, tensor<8x64x128xf32>, tensor<8x64x128xf32>, tensor<8x128x64xf32>) -> tensor<32x64xf32>
    return %y : tensor<32x64xf32>
  }
}
