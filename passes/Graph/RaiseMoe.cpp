//===- RaiseMoe.cpp - routed mixture-of-experts into graph.composite "moe" ===//
//
// The anchor is a router: topk(softmax(linear(x))). The block ends where
// every value derived from x (the router's and the experts' input) has
// joined into one: x's post-dominator in the data flow, the sum of the
// weighted expert outputs. The block holds everything between x and that
// join: router, dispatch, experts and combine.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Outlining.h"
#include "passes/Graph/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEMOEPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// The first op at which all values derived from `x` have joined into a
/// single one, or null.
Operation *joinOf(Value x) {
  llvm::DenseMap<Value, unsigned> pendingUses;
  pendingUses[x] = std::distance(x.use_begin(), x.use_end());
  Operation *definition = x.getDefiningOp();
  Operation *first = definition ? definition->getNextNode()
                                : &cast<BlockArgument>(x).getOwner()->front();
  for (Operation *op = first; op && !pendingUses.empty(); op = op->getNextNode()) {
    bool derived = false;
    for (Value operand : op->getOperands()) {
      auto found = pendingUses.find(operand);
      if (found == pendingUses.end())
        continue;
      derived = true;
      if (--found->second == 0)
        pendingUses.erase(found);
    }
    if (!derived)
      continue;
    for (Value result : op->getResults())
      if (!result.use_empty())
        pendingUses[result] = std::distance(result.use_begin(), result.use_end());
    if (pendingUses.size() == 1 && op->getNumResults() == 1 &&
        pendingUses.count(op->getResult(0)))
      return op;
  }
  return nullptr;
}

/// The ops between `x` and `join`: `join`'s backward slice through ops that
/// depend on `x` (weights and constants stay outside as inputs).
SmallVector<Operation *> blockBetween(Value x, Operation *join) {
  llvm::DenseMap<Operation *, bool> dependsOnX;
  std::function<bool(Operation *)> depends = [&](Operation *op) -> bool {
    auto found = dependsOnX.find(op);
    if (found != dependsOnX.end())
      return found->second;
    dependsOnX[op] = false;
    bool result = llvm::any_of(op->getOperands(), [&](Value operand) {
      if (operand == x)
        return true;
      Operation *producerOp = operand.getDefiningOp();
      return producerOp && producerOp->getBlock() == join->getBlock() && depends(producerOp);
    });
    dependsOnX[op] = result;
    return result;
  };
  llvm::SetVector<Operation *> block;
  SmallVector<Operation *> worklist = {join};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!depends(op) || !block.insert(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producerOp = operand.getDefiningOp())
        worklist.push_back(producerOp);
  }
  return block.takeVector();
}

void raiseMoe(TopKOp topk) {
  auto softmax = producer<SoftmaxOp>(topk.getInput());
  auto router = softmax ? producer<LinearOp>(softmax.getInput()) : LinearOp();
  if (!router || topk.getAxis() != softmax.getAxis())
    return;
  // x is what the router reads, or the value it views when others view it
  // too: the router and the experts may each view the tokens their own way
  // ([T, H] and [1, T, H]).
  Value x = router.getInput();
  while (auto view = producer<ReshapeOp>(x)) {
    if (view.getInput().hasOneUse())
      break;
    x = view.getInput();
  }
  Operation *join = joinOf(x);
  if (!join || join->isBeforeInBlock(topk))
    return;
  SmallVector<Operation *> block = blockBetween(x, join);
  // The experts must read x too, besides the router: otherwise this is no MoE.
  llvm::DenseSet<Value> views = {x};
  for (bool grew = true; grew;) // the block is not in program order
    grew = llvm::any_of(block, [&](Operation *op) {
      return isa<ReshapeOp>(op) && views.contains(op->getOperand(0)) &&
             views.insert(op->getResult(0)).second;
    });
  bool hasExperts = llvm::any_of(block, [&](Operation *op) {
    return op != router && !isa<ReshapeOp>(op) &&
           llvm::any_of(op->getOperands(), [&](Value v) { return views.contains(v); });
  });
  if (hasExperts)
    outlineComposite("moe", block, join);
}

struct RaiseMoePass : shardc::graph::impl::RaiseMoePassBase<RaiseMoePass> {
  void runOnOperation() override {
    SmallVector<TopKOp> routers;
    getOperation().walk([&](TopKOp topk) {
      if (!isa<CompositeOp>(topk->getParentOp()))
        routers.push_back(topk);
    });
    // Each outlined block ends at its join, after its router: block order is safe.
    for (TopKOp topk : routers)
      raiseMoe(topk);
  }
};

} // namespace
