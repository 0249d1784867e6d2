//===- VerifySharded.cpp - the sharded program, checked -------------------===//
//
// Partitioning trusts that the program is global (reshards, not
// collectives), op by op (no composites), and that a pipeline is already
// cut and scheduled (the shardings themselves fit the mesh: the dialect's
// verifier checks that on every op); a module that skipped a
// pass (hand-written, or a pipeline built in shardc-opt) is refused here
// with the pass it lacks instead of being partitioned wrongly.
//
//===----------------------------------------------------------------------===//
#include "passes/Partition/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace shardc;

namespace shardc::partition {
#define GEN_PASS_DEF_VERIFYSHARDEDPASS
#include "passes/Partition/Passes.h.inc"
} // namespace shardc::partition

namespace {

/// Why `op` does not belong in a sharded program, or success() when it does.
LogicalResult verifyShardedOp(Operation *op) {
  if (isa<graph::CompositeOp>(op))
    return op->emitOpError() << "must be inlined before partitioning (run "
                                "shardc-inline-composites)";
  if (isa<dist::DistDialect>(op->getDialect()) &&
      !isa<dist::ReshardOp, dist::SendOp, dist::RecvOp>(op))
    return op->emitOpError() << "is a collective of the partitioned program; the sharded "
                                "program has reshards (run shardc-partition once)";
  return success();
}

/// A pipeline is cut into stage functions and scheduled; a training step's
/// ops carry their stages instead (it is cut after partitioning).
LogicalResult verifyPipeline(ModuleOp module) {
  if (module->hasAttr(graph::kTrainingAttrName))
    return success();
  for (auto pipeline : module.getOps<dist::PipelineOp>()) {
    for (auto function : module.getOps<func::FuncOp>())
      if (!function->hasAttr(dist::kStageAttrName))
        return function.emitError() << "is not a pipeline stage (run shardc-pipeline-stages)";
    if (!pipeline.getActions())
      return pipeline.emitError() << "has no action lists (run shardc-pipeline-schedule)";
  }
  return success();
}

struct VerifyShardedPass : partition::impl::VerifyShardedPassBase<VerifyShardedPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyPipeline(module)))
      return signalPassFailure();
    bool wellFormed = true;
    // Every offending op is reported, not only the first.
    for (auto function : module.getOps<func::FuncOp>())
      function.getBody().walk([&](Operation *op) {
        if (failed(verifyShardedOp(op)))
          wellFormed = false;
      });
    if (!wellFormed)
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
