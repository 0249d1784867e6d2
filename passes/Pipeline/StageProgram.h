//===- StageProgram.h - a sharded program seen as a sequence of stages -*- C++ -*-===//
//
// What shardc-pipeline-stages needs from the sharded global program: which
// ops form the sequence that cuts divide (every op but weights, constants
// and what the inputs alone derive), and the numbers the stage search takes
// (StageSearch.h), priced by the sharding cost model with each op's chosen
// sharding. Values that only the inputs derive (masks, position tables) are
// recomputed by every stage that uses them instead of being sent: they read
// no weight, and are cheap next to sending them per micro-batch.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_STAGEPROGRAM_H
#define SHARDC_PASSES_PIPELINE_STAGEPROGRAM_H

#include "passes/Pipeline/StageSearch.h"
#include "passes/Sharding/CostModel.h"
#include "passes/Sharding/MeshShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace shardc::pipeline {

struct StageProgram {
  /// The ops cuts divide, in program order.
  std::vector<mlir::Operation *> sequence;
  llvm::DenseMap<mlir::Operation *, size_t> position;
  /// Weights, constants and input-derived ops: copied into each stage that
  /// uses them.
  llvm::DenseSet<mlir::Operation *> placed;
  StageProblem problem;
};

/// Builds the sequence and its figures for `function` on `mesh` (the stage
/// mesh, micro-batch axis included: the figures are per micro-batch).
StageProgram analyzeStageProgram(mlir::func::FuncOp function, const sharding::MeshShape &mesh,
                                 const sharding::DeviceModel &device);

/// The link a transfer between stages takes on `stages` (the stages' mesh):
/// stages are neighbours in the rank order, so a transfer stays on NVLink
/// while one stage's ranks do not fill a node.
const sharding::Link &stageLink(const sharding::MeshShape &stages,
                                const sharding::DeviceModel &device);

/// Local bytes of `value` under its sharding (from its defining op's
/// dist.shardings; whole when it has none).
int64_t localBytes(mlir::Value value, const sharding::MeshShape &mesh);

} // namespace shardc::pipeline

#endif
