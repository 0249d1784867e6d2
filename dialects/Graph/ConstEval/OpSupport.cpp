//===- OpSupport.cpp - Checks and helpers shared by the ops ---------------===//

#include "dialects/Graph/ConstEval/OpSupport.h"

#include "dialects/Graph/ConstEval/StridedLoop.h"

#include <cmath>

namespace shardc::constfold::detail {

Status checkOperand(const HostTensor &tensor, const char *role) {
  std::string problem = tensor.validate();
  if (problem.empty())
    return {};
  return Status::error(std::string(role) + " is malformed: " + problem);
}

Status checkAxis(int64_t axis, int64_t rank) {
  if (axis >= 0 && axis < rank)
    return {};
  return Status::error("axis " + std::to_string(axis) + " is out of range for rank " +
                       std::to_string(rank));
}

StatusOr<HostTensor> allocate(ScalarType type, const Shape &shape) {
  int64_t count = shapeNumElements(shape);
  if (count < 0)
    return Status::error("result shape " + formatShape(shape) + " is invalid");
  if (count > kMaxElements)
    return Status::error("result shape " + formatShape(shape) + " has " + std::to_string(count) +
                         " elements, more than the folding limit of " +
                         std::to_string(kMaxElements));
  HostTensor tensor{type, shape, {}, {}};
  if (isFloat(type))
    tensor.floats.assign(size_t(count), 0.0);
  else
    tensor.ints.assign(size_t(count), 0);
  return tensor;
}

void stridedCopy(const HostTensor &source, HostTensor &destination,
                 int64_t base, const Shape &strides) {
  withStorage(source, destination, [&](const auto &in, auto &out) {
    forEachStrided<1>(destination.shape, {strides}, {base},
                      [&](int64_t i, const std::array<int64_t, 1> &offset) {
                        out[size_t(i)] = in[size_t(offset[0])];
                      });
  });
}

void roundAll(std::vector<double> &values, ScalarType type) {
  if (type == ScalarType::F64)
    return;
  for (double &v : values)
    v = roundFloat(type, v);
}

void wrapAll(std::vector<int64_t> &values, ScalarType type) {
  if (type == ScalarType::I64)
    return;
  for (int64_t &v : values)
    v = wrapInt(type, uint64_t(v));
}

std::optional<int64_t> truncateToInt(ScalarType type, double value) {
  if (!std::isfinite(value))
    return std::nullopt;
  double truncated = std::trunc(value);
  // [-2^63, 2^63) is exactly the range where the conversion to int64 is defined.
  if (!(truncated >= -0x1p63 && truncated < 0x1p63))
    return std::nullopt;
  auto result = static_cast<int64_t>(truncated);
  if (!fitsIn(type, result))
    return std::nullopt;
  return result;
}

Status checkSameType(const HostTensor &a, const HostTensor &b, const char *opName) {
  if (a.type == b.type)
    return {};
  return Status::error(std::string(opName) + " needs operands of the same element type but got " +
                       typeName(a.type) + " and " + typeName(b.type));
}

} // namespace shardc::constfold::detail
