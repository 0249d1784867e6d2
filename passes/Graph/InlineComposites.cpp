//===- InlineComposites.cpp - replace composites by their bodies ----------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "passes/Graph/Outlining.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_INLINECOMPOSITESPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace {

struct InlineCompositesPass
    : shardc::graph::impl::InlineCompositesPassBase<InlineCompositesPass> {
  void runOnOperation() override {
    // Outermost composites only: inlining one inlines the composites nested in it.
    SmallVector<shardc::graph::CompositeOp> composites;
    getOperation().walk([&](shardc::graph::CompositeOp op) {
      if (!op->getParentOfType<shardc::graph::CompositeOp>())
        composites.push_back(op);
    });
    for (shardc::graph::CompositeOp composite : composites)
      shardc::graph::inlineComposite(composite);
  }
};

} // namespace
