//===- Reshape.cpp - ONNX Reshape -----------------------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

StatusOr<HostTensor> reshape(const HostTensor &operand, const Shape &newShape) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  int64_t count = shapeNumElements(newShape);
  if (count < 0)
    return Status::error("reshape target " + formatShape(newShape) +
                         " is invalid; dims must be resolved and non-negative");
  if (count != operand.numElements())
    return Status::error("cannot reshape " + formatShape(operand.shape) + " (" +
                         std::to_string(operand.numElements()) + " elements) to " +
                         formatShape(newShape) + " (" + std::to_string(count) + " elements)");
  // Row-major order is unchanged, so the storage is reused as-is.
  HostTensor out = operand;
  out.shape = newShape;
  return out;
}

} // namespace shardc::constfold
