//===- ModelStateBytes.h - what a training step's storage costs -*- C++ -*-===//
//
// The memory check (shardc-auto-shard) and the report count a training
// step's model state as weights, gradients and optimizer state. A trained
// weight of an fp32 step is a weight and a gradient of its size. A
// mixed-precision step (graph.compute_type) holds the fp32 master, counted
// with the optimizer's state, and its copy in the compute type
// (shardc-compute-copies), counted as the weight and its gradient, as ZeRO
// and Megatron-LM count them (2 + 2 + 4 bytes per parameter besides Adam's
// 8). Each part is split as its storage is: the copy and the gradient as
// the forward reads the copy, the master with the optimizer's state.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_MODELSTATEBYTES_H
#define SHARDC_DIALECTS_GRAPH_MODELSTATEBYTES_H

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

namespace shardc::graph {

struct ModelStateBytes {
  double weights = 0, gradients = 0, states = 0;
};

/// On the module of a training step planned with ZeRO (shardc --zero): the
/// stage (an i64). The plan's storage says how the optimizer state (1 and
/// up) and the weights (3) are split; the gradients the update reads are
/// reduce-scattered from stage 2 on, which no storage says.
inline constexpr llvm::StringLiteral kZeroStageAttrName = "graph.zero_stage";

/// The gradient bytes a device holds for a weight whose storage gives it
/// `gradients` bytes of gradient, under ZeRO `stage` with `dp` ranks:
/// stage 2 keeps each rank's reduce-scattered slice (stage 3's storage is
/// split already).
inline double zeroGradientBytes(double gradients, int64_t stage, int64_t dp) {
  return stage == 2 ? gradients / double(dp) : gradients;
}

/// What `storage` (a graph.weight with a graph.train role), whose block on a
/// device is `bytes`, costs that device.
inline ModelStateBytes modelStateBytes(mlir::Operation *storage, double bytes) {
  if (trainRole(storage) == kTrainState || storage->hasAttr(kComputeTypeAttrName))
    return {0, 0, bytes};
  return {bytes, bytes, 0};
}

} // namespace shardc::graph

#endif
