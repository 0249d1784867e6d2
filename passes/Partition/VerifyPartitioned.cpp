//===- VerifyPartitioned.cpp - the partitioned program, checked -----------===//
//
// The lowering translates op by op and trusts its input; what partitioning
// must have removed is checked here, at the phase boundary, so a program that
// skipped a pass (a hand-written module, a pipeline built in shardc-opt) is
// refused with the pass it lacks instead of being lowered wrongly.
//
//===----------------------------------------------------------------------===//
#include "passes/Partition/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace shardc::partition {
#define GEN_PASS_DEF_VERIFYPARTITIONEDPASS
#include "passes/Partition/Passes.h.inc"
} // namespace shardc::partition

namespace {

/// Why `op` does not belong in a partitioned program, or failure() when it does.
LogicalResult verifyPartitionedOp(Operation *op) {
  if (isa<shardc::graph::CompositeOp>(op))
    return op->emitOpError() << "must be inlined before lowering (run shardc-inline-composites)";
  if (isa<shardc::dist::ReshardOp>(op))
    return op->emitOpError() << "must become collectives before lowering (run shardc-partition)";
  // A weight's global sharding is what the artifact writer cuts it by.
  if (isa<shardc::graph::WeightOp>(op))
    return success();
  // A bucket's mark is no sharding: the report counts the buckets by it.
  if (llvm::any_of(op->getAttrs(), [](NamedAttribute attr) {
        return attr.getName().getValue().starts_with("dist.") &&
               attr.getName() != shardc::dist::kBucketAttrName;
      }))
    return op->emitOpError() << "is still annotated with shardings (run shardc-partition)";
  return success();
}

struct VerifyPartitionedPass
    : shardc::partition::impl::VerifyPartitionedPassBase<VerifyPartitionedPass> {
  void runOnOperation() override {
    bool wellFormed = true;
    for (auto mesh : getOperation().getOps<shardc::dist::MeshOp>())
      if (mesh.getAxisIndex(shardc::rt::kMicroBatchAxis)) {
        mesh.emitError() << "still has the micro-batch axis "
                         << shardc::rt::kMicroBatchAxis
                         << ", which is time and not devices (run shardc-split-microbatches)";
        wellFormed = false;
      }
    // Every offending op is reported, not only the first.
    for (auto function : getOperation().getOps<func::FuncOp>())
      function.getBody().walk([&](Operation *op) {
        if (failed(verifyPartitionedOp(op)))
          wellFormed = false;
      });
    if (!wellFormed)
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
