//===- VjpRules.cpp - dispatch to the rule of an op's family ----------------===//
#include "passes/Autodiff/VjpRules.h"

using namespace mlir;

namespace shardc::autodiff {

LogicalResult VjpCall::refuse(const Twine &why) {
  return op->emitOpError() << "cannot be differentiated for training: " << why;
}

LogicalResult buildVjp(VjpCall &call) {
  call.operandGrads.assign(call.op->getNumOperands(), Value());
  for (auto family : {vjpElementwise, vjpContraction, vjpNormalization, vjpAttention, vjpMovement,
                      vjpRouting})
    if (std::optional<LogicalResult> done = family(call)) {
      if (failed(*done))
        return failure();
      for (auto [index, needed] : llvm::enumerate(call.needed))
        if (needed && !call.operandGrads[index])
          return call.refuse("its rule gives no gradient for operand " + Twine(index));
      return success();
    }
  return call.op->emitOpError()
         << "has no gradient rule, and the loss depends on a trained weight through it";
}

} // namespace shardc::autodiff
