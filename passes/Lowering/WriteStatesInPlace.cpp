//===- WriteStatesInPlace.cpp - the update kernel writes the state itself --===//
//
// A training step's write of a parameter or optimizer state lowers to a copy
// of the new value into the state's buffer (docs/training.md). The new value
// is the result of an elementwise kernel (the optimizer's update, fused): it
// can write the state directly, reading and writing each element at the same
// index, which saves a copy of every parameter and state per step (three
// times the model's bytes for AdamW). Done only when nothing after that
// kernel still reads the state's old value.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/Passes.h"

#include "passes/Lowering/ElementwiseExpression.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace shardc::lowering {
#define GEN_PASS_DEF_WRITESTATESINPLACEPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace shardc::lowering {
namespace {

/// The one kernel that writes `buffer`, when exactly one does.
exec::KernelOp onlyWriter(Value buffer) {
  exec::KernelOp writer;
  for (OpOperand &use : buffer.getUses()) {
    auto kernel = dyn_cast<exec::KernelOp>(use.getOwner());
    if (!kernel || !llvm::is_contained(kernel.getOutputs(), buffer))
      continue;
    if (writer)
      return {};
    writer = kernel;
  }
  return writer;
}

/// Whether an op after `from` reads `state`, other than `copy`.
bool readLater(Value state, Operation *from, Operation *copy) {
  return llvm::any_of(state.getUsers(), [&](Operation *user) {
    return user != copy && user != from && from->isBeforeInBlock(user);
  });
}

void writeInPlace(exec::KernelOp copy) {
  Value value = copy.getInputs().front(), state = copy.getOutputs().front();
  auto alloc = value.getDefiningOp<exec::AllocOp>();
  exec::KernelOp writer = alloc ? onlyWriter(value) : exec::KernelOp();
  if (!writer || writer.getOutputs().size() != 1 || !expressionOf(writer) ||
      value.getType() != state.getType() || !writer->isBeforeInBlock(copy) ||
      readLater(state, writer, copy))
    return;
  // The state's storage may be declared only where the copy wrote it (a
  // stage's update program declares each storage before its first use):
  // a declaration reads nothing, so it moves up to the kernel that now
  // writes it.
  Operation *storage = state.getDefiningOp();
  if (storage && writer->isBeforeInBlock(storage)) {
    if (storage->getNumOperands() != 0 || storage->getBlock() != writer->getBlock())
      return;
    storage->moveBefore(writer);
  }
  copy->erase();
  value.replaceAllUsesWith(state);
  alloc->erase();
}

struct WriteStatesInPlacePass : impl::WriteStatesInPlacePassBase<WriteStatesInPlacePass> {
  void runOnOperation() override {
    SmallVector<exec::KernelOp> copies;
    getOperation().walk([&](exec::KernelOp kernel) {
      if (kernel.getKernel() == "copy")
        copies.push_back(kernel);
    });
    for (exec::KernelOp copy : copies)
      writeInPlace(copy);
  }
};

} // namespace
} // namespace shardc::lowering
