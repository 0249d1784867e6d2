//===- InlineComposites.cpp - replace composites by their bodies ----------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_INLINECOMPOSITESPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace {

struct InlineCompositesPass
    : shardc::graph::impl::InlineCompositesPassBase<InlineCompositesPass> {
  void runOnOperation() override {
    SmallVector<shardc::graph::CompositeOp> composites;
    // Post-order: nested composites (experts in a MoE) are inlined first.
    getOperation().walk([&](shardc::graph::CompositeOp op) { composites.push_back(op); });
    for (shardc::graph::CompositeOp composite : composites) {
      OpBuilder builder(composite);
      IRMapping mapping;
      Block &body = composite.getBody().front();
      mapping.map(body.getArguments(), composite.getInputs());
      for (Operation &op : body.without_terminator())
        builder.clone(op, mapping);
      auto yield = cast<shardc::graph::YieldOp>(body.getTerminator());
      for (auto [result, yielded] : llvm::zip(composite.getResults(), yield.getValues()))
        result.replaceAllUsesWith(mapping.lookup(yielded));
      composite.erase();
    }
  }
};

} // namespace
