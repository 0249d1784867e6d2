//===- Shapes.cpp - broadcasting and strides ------------------------------===//
#include "runtime/kernels/Shapes.h"

namespace shardc::rt::kernels {

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &result) {
  const size_t rank = std::max(a.size(), b.size());
  result.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: dim i from the end.
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return false;
    result[rank - 1 - i] = x == 1 ? y : x; // 1 against 0 gives 0
  }
  return true;
}

bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d])
      return false;
  return true;
}

Shape broadcastStrides(const Shape &from, const Shape &to) {
  Shape strides(to.size(), 0);
  const Shape own = rowMajorStrides(from);
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    strides[lead + d] = from[d] == 1 ? 0 : own[d];
  return strides;
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d)
    result *= shape[d];
  return result;
}

} // namespace shardc::rt::kernels
