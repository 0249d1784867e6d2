//===- ExecDialect.cpp - the exec dialect and its verifiers ---------------===//
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc::exec;

#include "dialects/Exec/ExecDialect.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/Exec/ExecOps.cpp.inc"

void ExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Exec/ExecOps.cpp.inc"
      >();
}

LogicalResult ViewOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto result = cast<MemRefType>(getBuffer().getType());
  if (source.getElementType() != result.getElementType() ||
      source.getNumElements() != result.getNumElements())
    return emitOpError() << "must keep the element type and count; expected "
                         << source.getNumElements() << " x " << source.getElementType()
                         << " but got " << result.getNumElements() << " x "
                         << result.getElementType();
  return success();
}

/// The op that owns the bytes `buffer` refers to, through views.
static Operation *storageOf(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  return buffer.getDefiningOp();
}

LogicalResult KernelOp::verify() {
  for (auto [index, output] : llvm::enumerate(getOutputs())) {
    Operation *storage = storageOf(output);
    // A training step writes its parameters and optimizer states.
    auto weight = dyn_cast_or_null<WeightOp>(storage);
    if (weight && weight->hasAttr(shardc::graph::kTrainAttrName))
      continue;
    if (!isa_and_nonnull<AllocOp>(storage))
      return emitOpError() << "output " << index
                           << " must be an arena buffer or a trained weight's state; weights, "
                              "constants and inputs are read-only";
  }
  return success();
}
