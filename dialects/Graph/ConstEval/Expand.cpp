//===- Expand.cpp - ONNX Expand -------------------------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

StatusOr<HostTensor> expand(const HostTensor &operand, const Shape &shape) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  StatusOr<Shape> result = broadcastShapes(operand.shape, shape);
  if (!result)
    return Status::error("cannot expand: " + result.message());
  StatusOr<HostTensor> out = detail::allocate(operand.type, *result);
  if (out) // stride 0 repeats the broadcast dims
    detail::stridedCopy(operand, *out, 0,
                        broadcastStrides(operand.shape, *result));
  return out;
}

} // namespace shardc::constfold
