//===- RaiseRoutedExperts.cpp - moe composites into graph.moe -------------===//
//
// A copy of each moe composite is inlined and the spellings' matchers run on
// the copy, where the experts' weights are the graph.weight ops themselves
// (inside the composite they are block arguments). On a match the
// composite's result becomes graph.moe's; otherwise the copy is left dead
// and the composite stays.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Outlining.h"
#include "passes/Graph/Passes.h"
#include "passes/Graph/RoutedExperts.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEROUTEDEXPERTSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

std::optional<RoutedExperts> matchAnySpelling(Value output, WeightValues &weights) {
  if (std::optional<RoutedExperts> found = matchDenseGateTable(output, weights))
    return found;
  return std::nullopt;
}

/// Replaces `composite` by its body with graph.moe in place of the experts.
void raise(CompositeOp composite, WeightValues &weights) {
  if (composite.getKind() != "moe" || composite->getNumResults() != 1)
    return;
  OpBuilder builder(composite);
  auto copy = cast<CompositeOp>(builder.clone(*composite));
  Value output = inlineComposite(copy).front();
  std::optional<RoutedExperts> found = matchAnySpelling(output, weights);
  if (!found)
    return;
  builder.setInsertionPointAfterValue(output);
  Value moe = buildMoe(builder, composite.getLoc(), found->input, found->indices, found->gates,
                       found->experts);
  for (Value addend : found->addends)
    if (moe)
      moe = createIfValid<AddOp>(builder, composite.getLoc(), {addend, moe});
  if (moe && moe.getType() == output.getType()) {
    composite->replaceAllUsesWith(ValueRange{moe});
    composite.erase();
  }
}

struct RaiseRoutedExpertsPass
    : shardc::graph::impl::RaiseRoutedExpertsPassBase<RaiseRoutedExpertsPass> {
  void runOnOperation() override {
    SmallVector<CompositeOp> composites;
    getOperation().walk([&](CompositeOp op) { composites.push_back(op); });
    WeightValues weights;
    for (CompositeOp composite : composites)
      raise(composite, weights);
    // The copies of composites no spelling matched, and the expert
    // branches graph.moe replaced.
    eraseDeadOps(getOperation());
  }
};

} // namespace
