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

#include "mlir/IR/IRMapping.h"

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
  for (auto match : {matchScatteredEntries, matchBatchedMatmul})
    if (std::optional<RoutedExperts> found = match(output))
      return found;
  return std::nullopt;
}

/// The composite's result and the values its sole users make of it, one
/// after the other, while they are reshapes or sums: RaiseMoe ends a block
/// where the values derived from the tokens join, which for a spelling that
/// weights each router entry apart is before the sum over each token's
/// entries.
SmallVector<Operation *> resultChain(CompositeOp composite) {
  SmallVector<Operation *> chain = {composite};
  while (Operation *user = soleUser(chain.back()->getResult(0))) {
    if (!isa<ReshapeOp, ReduceSumOp>(user))
      break;
    chain.push_back(user);
  }
  return chain;
}

/// Replaces `composite` (and the sum after it, if that is where the block
/// ends) by its body with graph.moe in place of the experts.
void raise(CompositeOp composite, WeightValues &weights) {
  if (composite.getKind() != "moe" || composite->getNumResults() != 1)
    return;
  OpBuilder builder(composite);
  auto copy = cast<CompositeOp>(builder.clone(*composite));
  Value output = inlineComposite(copy).front();
  // Copies of the ops after the composite read the inlined body's result,
  // so a matcher sees the whole block up to each of them.
  SmallVector<Operation *> chain = resultChain(composite);
  SmallVector<Value> candidates = {output};
  builder.setInsertionPoint(chain.back());
  for (Operation *op : ArrayRef(chain).drop_front()) {
    IRMapping mapping;
    mapping.map(op->getOperand(0), candidates.back());
    candidates.push_back(builder.clone(*op, mapping)->getResult(0));
  }
  for (auto [candidate, replaced] : llvm::zip(candidates, chain)) {
    std::optional<RoutedExperts> found = matchAnySpelling(candidate, weights);
    if (!found)
      continue;
    builder.setInsertionPointAfterValue(candidate);
    Value moe = buildMoe(builder, composite.getLoc(), *found);
    for (Value addend : found->addends)
      if (moe)
        moe = createIfValid<AddOp>(builder, composite.getLoc(), {addend, moe});
    if (moe && moe.getType() == candidate.getType()) {
      replaced->replaceAllUsesWith(ValueRange{moe});
      // The ops of the chain before `replaced` are dead now.
      for (Operation *op : llvm::reverse(chain))
        if (op->use_empty())
          op->erase();
      return;
    }
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
