//===- SplitWeightCasts.cpp - a cast of a weight per use ------------------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_SPLITWEIGHTCASTSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace {

namespace graph = shardc::graph;

struct SplitWeightCastsPass
    : graph::impl::SplitWeightCastsPassBase<SplitWeightCastsPass> {
  void runOnOperation() override {
    SmallVector<graph::CastOp> shared;
    getOperation().walk([&](graph::CastOp cast) {
      if (cast.getInput().getDefiningOp<graph::WeightOp>() && !cast->hasOneUse())
        shared.push_back(cast);
    });
    for (graph::CastOp cast : shared) {
      OpBuilder builder(cast);
      // The first use keeps the original; every other gets a copy.
      for (OpOperand &use : llvm::make_early_inc_range(llvm::drop_begin(cast->getUses())))
        use.set(builder.clone(*cast)->getResult(0));
    }
  }
};

} // namespace
