//===- GatherChain.cpp - rewriting the gathers that return a value --------===//
#include "dialects/Dist/GatherChain.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::dist {

void narrowGatherInChain(OpOperand &result, ArrayRef<AllGatherOp> later, AllGatherOp target,
                         ArrayRef<StringRef> keptAxes, MeshOp mesh) {
  OpBuilder builder(target);
  FlatSymbolRefAttr meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  Value value = target.getInput();
  if (!keptAxes.empty())
    value = builder.create<AllGatherOp>(target.getLoc(), value, meshRef, keptAxes, target.getDim(),
                                        mesh.getGroupSize(builder.getStrArrayAttr(keptAxes)));
  for (AllGatherOp gather : llvm::reverse(later)) {
    builder.setInsertionPoint(gather);
    value = builder.create<AllGatherOp>(
        gather.getLoc(), value, meshRef,
        SmallVector<StringRef>(gather.getMeshAxes().getAsValueRange<StringAttr>()),
        gather.getDim(), mesh.getGroupSize(gather.getMeshAxes()));
  }
  result.set(value);
  for (AllGatherOp gather : later)
    gather.erase();
  target.erase();
}

} // namespace shardc::dist
