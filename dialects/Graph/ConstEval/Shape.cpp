//===- Shape.cpp - Static shapes and numpy-style broadcasting -------------===//

#include "dialects/Graph/ConstEval/Shape.h"

#include <algorithm>

namespace shardc::constfold {

int64_t shapeNumElements(const Shape &shape) {
  // `extent` counts 0-sized dims as 1: it bounds every stride and index
  // computation on the shape, so bounding it makes all of those safe.
  int64_t count = 1, extent = 1;
  for (int64_t dim : shape) {
    if (dim < 0 ||
        __builtin_mul_overflow(extent, std::max<int64_t>(dim, 1), &extent))
      return -1;
    count *= dim; // cannot overflow: count <= extent
  }
  return count;
}

std::string formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ',';
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

StatusOr<Shape> broadcastShapes(const Shape &lhs, const Shape &rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: a missing leading dim acts as 1.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l < 0 || r < 0 || (l != r && l != 1 && r != 1))
      return Status::error("shapes " + formatShape(lhs) + " and " + formatShape(rhs) +
                           " are not broadcast-compatible");
    result[i] = l == 1 ? r : l;
  }
  return result;
}

Shape broadcastStrides(const Shape &from, const Shape &to) {
  Shape strides(to.size(), 0);
  Shape own = rowMajorStrides(from);
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    strides[offset + i] = from[i] == 1 ? 0 : own[i];
  return strides;
}

} // namespace shardc::constfold
