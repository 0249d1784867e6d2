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

#include <optional>

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

/// A training step seen by the stage search: its forward ops are the
/// sequence that cuts divide, each priced with the backward and update ops
/// it owns (the step's F + B + W per micro-batch, the update once per step);
/// every other op that is not placed gets its stage from the forward cut
/// (TrainingStages.h).
struct TrainingStageProgram {
  StageProgram forward;
  /// The backward and update ops, in program order.
  std::vector<mlir::Operation *> others;
  /// Each weight a forward op reads: the position of the first such op.
  llvm::DenseMap<mlir::Operation *, size_t> home;
  /// The latest forward position among the forward values and weights `op`
  /// reads, or none.
  std::optional<size_t> forwardOwner(mlir::Operation *op) const;
};

/// As analyzeStageProgram for a training step (`graph.phase` tags) run in
/// `microbatches` pieces, under the --recompute policy.
TrainingStageProgram analyzeTrainingStageProgram(mlir::func::FuncOp function,
                                                 const sharding::MeshShape &mesh,
                                                 const sharding::DeviceModel &device,
                                                 int64_t microbatches,
                                                 StageProblem::Recompute recompute);

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
