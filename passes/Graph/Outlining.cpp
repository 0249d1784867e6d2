//===- Outlining.cpp - move a group of ops into a graph.composite ---------===//
#include "passes/Graph/Outlining.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace shardc::graph {

CompositeOp outlineComposite(StringRef kind, ArrayRef<Operation *> ops, Operation *root) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  if (!inside.contains(root))
    return {};
  for (Operation *op : ops)
    if (op != root && llvm::any_of(op->getUsers(),
                                   [&](Operation *user) { return !inside.contains(user); }))
      return {};
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  if (ordered.back() != root)
    return {};

  llvm::SetVector<Value> inputs;
  for (Operation *op : ordered)
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()))
        inputs.insert(operand);

  OpBuilder builder(root);
  auto composite = builder.create<CompositeOp>(root->getLoc(), root->getResultTypes(),
                                               builder.getStringAttr(kind), inputs.getArrayRef());
  Block *body = builder.createBlock(&composite.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *op : ordered)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value result : root->getResults())
    yielded.push_back(mapping.lookup(result));
  builder.create<YieldOp>(root->getLoc(), yielded);

  root->replaceAllUsesWith(composite.getResults());
  for (Operation *op : llvm::reverse(ordered))
    op->erase();
  return composite;
}

SmallVector<Value> inlineComposite(CompositeOp composite) {
  OpBuilder builder(composite);
  IRMapping mapping;
  Block &body = composite.getBody().front();
  mapping.map(body.getArguments(), composite.getInputs());
  SmallVector<CompositeOp> nested;
  for (Operation &op : body.without_terminator()) {
    Operation *copy = builder.clone(op, mapping);
    if (auto inner = dyn_cast<CompositeOp>(copy))
      nested.push_back(inner);
  }
  for (CompositeOp inner : nested)
    inlineComposite(inner);
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> results;
  for (Value yielded : yield.getValues())
    results.push_back(mapping.lookup(yielded));
  composite->replaceAllUsesWith(results);
  composite.erase();
  return results;
}

} // namespace shardc::graph
