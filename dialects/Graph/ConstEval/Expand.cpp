//===- Expand.cpp - ONNX Expand -------------------------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

Result<HostTensor> expand(const HostTensor &operand, const Shape &shape) {
  if (auto error = detail::checkOperand(operand, "operand"))
    return *error;
  Result<Shape> result = broadcastShapes(operand.shape, shape);
  if (!result)
    return fail("cannot expand: " + result.error());
  Result<HostTensor> out = detail::allocate(operand.type, *result);
  if (out) // stride 0 repeats the broadcast dims
    detail::stridedCopy(operand, *out, 0,
                        broadcastStrides(operand.shape, *result));
  return out;
}

} // namespace shardc::constfold
