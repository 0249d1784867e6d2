//===- Where.cpp - ONNX Where ---------------------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

namespace shardc::constfold {

Result<HostTensor> where(const HostTensor &cond, const HostTensor &x,
                         const HostTensor &y) {
  if (auto error = detail::checkOperand(cond, "condition"))
    return *error;
  if (auto error = detail::checkOperand(x, "x"))
    return *error;
  if (auto error = detail::checkOperand(y, "y"))
    return *error;
  if (cond.type != ScalarType::Bool)
    return fail(std::string("where needs a bool condition but got ") +
                typeName(cond.type));
  if (auto error = detail::checkSameType(x, y, "where"))
    return *error;

  Result<Shape> xy = broadcastShapes(x.shape, y.shape);
  if (!xy)
    return fail(xy.error());
  Result<Shape> shape = broadcastShapes(cond.shape, *xy);
  if (!shape)
    return fail("condition " + formatShape(cond.shape) + " and values " +
                formatShape(*xy) + " are not broadcast-compatible");
  Result<HostTensor> out = detail::allocate(x.type, *shape);
  if (!out)
    return out;

  const std::array<Shape, 3> strides = {broadcastStrides(cond.shape, *shape),
                                        broadcastStrides(x.shape, *shape),
                                        broadcastStrides(y.shape, *shape)};
  auto select = [&](const auto &xs, const auto &ys, auto &result) {
    detail::forEachStrided<3>(
        *shape, strides, {0, 0, 0},
        [&](int64_t i, const std::array<int64_t, 3> &at) {
          result[size_t(i)] = cond.ints[size_t(at[0])] ? xs[size_t(at[1])]
                                                       : ys[size_t(at[2])];
        });
  };
  if (isFloat(x.type))
    select(x.floats, y.floats, out->floats);
  else
    select(x.ints, y.ints, out->ints);
  return out;
}

} // namespace shardc::constfold
