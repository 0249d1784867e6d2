// RUN: shardc-opt %s | shardc-opt | FileCheck %s
// Meshes, shardings and every dist op parse, verify and print back the same.

// CHECK: dist.mesh @m = <["dp"=2, "tp"=4]>
dist.mesh @m = <["dp"=2, "tp"=4]>
// CHECK: dist.mesh @pipe = <["pp"=4, "dp"=2, "tp"=8]>
dist.mesh @pipe = <["pp" = 4, "dp" = 2, "tp" = 8]>
// A mesh without axes is one device.
// CHECK: dist.mesh @single = <[]>
dist.mesh @single = <[]>

// CHECK-LABEL: func.func @shardings
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>}
// CHECK-SAME: {dist.sharding = #dist.sharding<@m, []>}
// CHECK-SAME: -> (tensor<8x6x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {}], partial={"tp"}>})
func.func @shardings(%x: tensor<8x6x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>},
                     %s: tensor<f32> {dist.sharding = #dist.sharding<@m, []>})
    -> (tensor<8x6x16xf32> {dist.sharding = #dist.sharding<@m, [{"dp"}, {}, {}], partial={"tp"}>}) {
  // A dim split over several axes lists them major to minor.
  // CHECK: graph.add %{{.*}}, %{{.*}} {dist.shardings = [#dist.sharding<@m, [{"dp", "tp"}, {}, {}]>]}
  %0 = graph.add %x, %x {dist.shardings = [#dist.sharding<@m, [{"dp", "tp"}, {}, {}]>]}
      : (tensor<8x6x16xf32>, tensor<8x6x16xf32>) -> tensor<8x6x16xf32>
  // CHECK: graph.mul %{{.*}}, %{{.*}} {dist.shardings = [#dist.sharding<@m, [], partial={"dp", "tp"}>]}
  %1 = graph.mul %s, %s {dist.shardings = [#dist.sharding<@m, [], partial={"dp", "tp"}>]}
      : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK: dist.reshard %{{.*}} to <@m, [{"tp"}, {}, {"dp"}]> : tensor<8x6x16xf32>
  %2 = dist.reshard %0 to <@m, [{"tp"}, {}, {"dp"}]> : tensor<8x6x16xf32>
  // The full attribute syntax parses too, where no type follows it.
  // CHECK: dist.reshard %{{.*}} to <@m, [{}, {}, {}], partial={"tp"}> {note} : tensor<8x6x16xf32>
  %3 = dist.reshard %2 to #dist.sharding<@m, [{}, {}, {}], partial={"tp"}> {note} : tensor<8x6x16xf32>
  // CHECK: dist.reshard %{{.*}} to <@single, []> : tensor<f32>
  %4 = dist.reshard %1 to <@single, []> : tensor<f32>
  return %3 : tensor<8x6x16xf32>
}

// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: (tensor<4x8xbf16> {dist.sharding = #dist.sharding<@pipe, [{}, {"tp"}]>})
func.func private @declaration(tensor<4x8xbf16> {dist.sharding = #dist.sharding<@pipe, [{}, {"tp"}]>})

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<4x8xf32>, %i: tensor<2x3xi32>) -> tensor<4x8xf32> {
  // CHECK: dist.all_reduce %{{.*}} on @m ["tp"] : tensor<4x8xf32>
  %0 = dist.all_reduce %x on @m ["tp"] : tensor<4x8xf32>
  // The default reduction is not printed.
  // CHECK: dist.all_reduce %{{.*}} on @m ["dp", "tp"] : tensor<4x8xf32>
  %1 = dist.all_reduce %0 on @m ["dp", "tp"] reduction = sum : tensor<4x8xf32>
  // CHECK: dist.all_gather %{{.*}} on @m ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  %2 = dist.all_gather %1 on @m ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x32xf32>
  // Several axes form one group of 2 x 4 devices.
  // CHECK: dist.all_gather %{{.*}} on @m ["dp", "tp"] dim = 0 : tensor<4x8xf32> -> tensor<32x8xf32>
  %3 = dist.all_gather %1 on @m ["dp", "tp"] dim = 0 : tensor<4x8xf32> -> tensor<32x8xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @m ["tp"] dim = 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  %4 = dist.reduce_scatter %2 on @m ["tp"] dim = 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  // CHECK: dist.all_to_all %{{.*}} on @m ["tp"] split_dim = 1 concat_dim = 0 : tensor<4x8xf32> -> tensor<16x2xf32>
  %5 = dist.all_to_all %4 on @m ["tp"] split_dim = 1 concat_dim = 0 : tensor<4x8xf32> -> tensor<16x2xf32>
  // CHECK: dist.all_slice %{{.*}} on @m ["dp"] dim = 0 : tensor<16x2xf32> -> tensor<8x2xf32>
  %6 = dist.all_slice %5 on @m ["dp"] dim = 0 : tensor<16x2xf32> -> tensor<8x2xf32>
  // CHECK: dist.broadcast %{{.*}} on @m ["dp"] root = 1 : tensor<8x2xf32>
  %7 = dist.broadcast %6 on @m ["dp"] root = 1 : tensor<8x2xf32>
  // CHECK: dist.broadcast %{{.*}} on @m ["tp"] root = 0 : tensor<2x3xi32>
  %8 = dist.broadcast %i on @m ["tp"] root = 0 : tensor<2x3xi32>
  return %4 : tensor<4x8xf32>
}

// Pipeline stages: a transfer leaves one stage's function and enters a later one.
// CHECK-LABEL: func.func @first_stage
// CHECK-SAME: dist.stage = 0
func.func @first_stage(%x: tensor<2x16xf16>) attributes {dist.stage = 0 : i64} {
  // CHECK: dist.send %{{.*}} to stage 3 transfer 0 : tensor<2x16xf16>
  dist.send %x to stage 3 transfer 0 : tensor<2x16xf16>
  return
}

// CHECK-LABEL: func.func @later_stage
func.func @later_stage() -> tensor<2x16xf16> attributes {dist.stage = 3 : i64} {
  // CHECK: %[[R:.*]] = dist.recv from stage 0 transfer 0 : tensor<2x16xf16>
  %0 = dist.recv from stage 0 transfer 0 : tensor<2x16xf16>
  // CHECK: return %[[R]]
  return %0 : tensor<2x16xf16>
}

// CHECK: dist.pipeline {actions = {{\[}}[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>]{{.*}}microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
dist.pipeline {actions = [[#dist.action<forward, stage = 0, microbatch = 0, transfer = -1>, #dist.action<send, stage = 1, microbatch = 0, transfer = 0>], [#dist.action<recv, stage = 0, microbatch = 0, transfer = 0>, #dist.action<forward, stage = 1, microbatch = 0, transfer = -1>]], microbatches = 1 : i64, pipeline_ranks = 2 : i64, schedule = "gpipe", virtual_stages = 1 : i64}
