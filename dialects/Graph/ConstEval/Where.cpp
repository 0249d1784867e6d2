//===- Where.cpp - ONNX Where ---------------------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

namespace shardc::constfold {

StatusOr<HostTensor> where(const HostTensor &cond, const HostTensor &x, const HostTensor &y) {
  if (Status status = detail::checkOperand(cond, "condition"); !status)
    return status;
  if (Status status = detail::checkOperand(x, "x"); !status)
    return status;
  if (Status status = detail::checkOperand(y, "y"); !status)
    return status;
  if (cond.type != ScalarType::Bool)
    return Status::error(std::string("where needs a bool condition but got ") +
                         typeName(cond.type));
  if (Status status = detail::checkSameType(x, y, "where"); !status)
    return status;

  StatusOr<Shape> xy = broadcastShapes(x.shape, y.shape);
  if (!xy)
    return Status::error(xy.message());
  StatusOr<Shape> shape = broadcastShapes(cond.shape, *xy);
  if (!shape)
    return Status::error("condition " + formatShape(cond.shape) + " and values " +
                         formatShape(*xy) + " are not broadcast-compatible");
  StatusOr<HostTensor> out = detail::allocate(x.type, *shape);
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
