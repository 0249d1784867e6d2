//===- ExecDialect.cpp - the exec dialect and its verifiers ---------------===//
#include "dialects/Exec/ExecDialect.h"

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
  for (auto [index, output] : llvm::enumerate(getOutputs()))
    if (!isa_and_nonnull<AllocOp>(storageOf(output)))
      return emitOpError() << "output " << index
                           << " must be an arena buffer; weights, constants and inputs are "
                              "read-only";
  return success();
}
