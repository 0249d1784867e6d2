//===- UnflattenTokens.cpp - token-wise regions back on [B, S, H] ---------===//
#include "passes/Graph/UnflattenTokens.h"

#include "passes/Graph/Matchers.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace shardc::graph {
namespace {

/// Whether `op` works per token on its operand `index` (a [tokens, H]
/// value). Binary ops are checked again once the region is known: their
/// other operand must be in it or the same for every token (rank <= 1).
bool worksPerToken(Operation *op, unsigned index) {
  if (auto norm = dyn_cast<LayerNormOp>(op))
    return index == 0 && int64_t(norm.getAxis()) == norm.getType().getRank() - 1;
  if (auto norm = dyn_cast<RmsNormOp>(op))
    return index == 0 && int64_t(norm.getAxis()) == norm.getType().getRank() - 1;
  if (isa<LinearOp>(op))
    return index == 0;
  return isa<NegOp, AbsOp, SqrtOp, RsqrtOp, ReciprocalOp, ExpOp, LogOp, CosOp, SinOp, ErfOp,
             TanhOp, SigmoidOp, ReluOp, SiluOp, GeluOp, AddOp, SubOp, MulOp, DivOp, MaxOp,
             MinOp>(op);
}

struct Region {
  llvm::SetVector<Operation *> ops;        ///< token-wise ops, in block order
  SmallVector<ReshapeOp> exits;            ///< views back to [B, S, H]
};

/// The region reached from `flat`, or nothing when some use is not token-wise.
std::optional<Region> regionFrom(Value flat, ArrayRef<int64_t> unflattened) {
  Region region;
  llvm::DenseSet<Value> inside = {flat};
  SmallVector<Value> worklist = {flat};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto back = dyn_cast<ReshapeOp>(user);
          back && back.getType().getShape() == unflattened) {
        region.exits.push_back(back);
        continue;
      }
      if (!worksPerToken(user, use.getOperandNumber()))
        return std::nullopt;
      if (region.ops.insert(user))
        for (Value result : user->getResults())
          if (inside.insert(result).second)
            worklist.push_back(result);
    }
  }
  // Binary ops must take both sides from the region (or a per-feature one).
  for (Operation *op : region.ops)
    for (Value operand : op->getOperands())
      if (!inside.contains(operand) && tensorType(operand).getRank() > 1 &&
          !isa<LinearOp>(op))
        return std::nullopt;
  if (region.exits.empty())
    return std::nullopt;
  return region;
}

void unflatten(ReshapeOp flatten) {
  ArrayRef<int64_t> flat = flatten.getType().getShape();
  ArrayRef<int64_t> source = tensorType(flatten.getInput()).getShape();
  if (flat.size() != 2 || source.size() < 3 || source.back() != flat.back())
    return;
  std::optional<Region> region = regionFrom(flatten.getResult(), source);
  if (!region)
    return;
  IRMapping mapping;
  mapping.map(flatten.getResult(), flatten.getInput());
  SmallVector<Operation *> ordered(region->ops.begin(), region->ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  int64_t added = int64_t(source.size()) - 2;
  SmallVector<Operation *> created;
  for (Operation *op : ordered) {
    OpBuilder builder(op);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(mapping.lookupOrDefault(operand));
    NamedAttrList attributes(op->getAttrs());
    // Norms name their axis: it moves with the added leading dims.
    if (auto axis = op->getAttrOfType<IntegerAttr>("axis"))
      attributes.set("axis", builder.getI64IntegerAttr(axis.getInt() + added));
    Operation *lifted =
        createInferred(builder, op->getLoc(), op->getName(), operands, attributes.getAttrs());
    if (!lifted) {
      for (Operation *made : llvm::reverse(created))
        made->erase();
      return;
    }
    created.push_back(lifted);
    mapping.map(op->getResults(), lifted->getResults());
  }
  for (ReshapeOp exit : region->exits)
    exit.replaceAllUsesWith(mapping.lookup(exit.getInput()));
}

} // namespace

void unflattenTokenRegions(Operation *root) {
  SmallVector<ReshapeOp> reshapes;
  root->walk([&](ReshapeOp reshape) { reshapes.push_back(reshape); });
  for (ReshapeOp reshape : reshapes)
    unflatten(reshape);
  eraseDeadOps(root);
}

} // namespace shardc::graph
