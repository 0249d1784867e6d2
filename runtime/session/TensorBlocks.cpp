//===- TensorBlocks.cpp - blocks of tensors as manifests place them -------===//
#include "runtime/session/TensorBlocks.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <cstring>

namespace shardc::rt {

/// Far above any real tensor's rank; a larger one is a hostile manifest.
constexpr size_t kMaxRank = 16;

std::optional<Shape> shapeOf(const nlohmann::json &value) {
  if (!value.is_array() || value.size() > kMaxRank)
    return std::nullopt;
  Shape shape;
  int64_t elements = 1;
  for (const nlohmann::json &dim : value) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
      return std::nullopt;
    shape.push_back(dim.get<int64_t>());
    if (shape.back() > 0 && elements > INT64_MAX / shape.back())
      return std::nullopt;
    elements *= shape.back();
  }
  return shape;
}

bool fits(const Shape &offsets, const Shape &inner, const Shape &outer) {
  if (offsets.size() != outer.size() || inner.size() != outer.size())
    return false;
  for (size_t dim = 0; dim < outer.size(); ++dim)
    if (offsets[dim] > outer[dim] || inner[dim] > outer[dim] - offsets[dim])
      return false;
  return true;
}

void copyOverlap(const std::byte *from, const Shape &fromShape, const Shape &fromAt, std::byte *to,
                 const Shape &toShape, const Shape &toAt, size_t width,
                 std::vector<uint8_t> *covered) {
  const size_t rank = toShape.size();
  Shape low(rank), size(rank);
  for (size_t dim = 0; dim < rank; ++dim) {
    low[dim] = std::max(fromAt[dim], toAt[dim]);
    int64_t high = std::min(fromAt[dim] + fromShape[dim], toAt[dim] + toShape[dim]);
    if (high <= low[dim])
      return;
    size[dim] = high - low[dim];
  }
  // Row by row along the last dim; the other dims count like an odometer.
  const int64_t row = rank ? size.back() : 1;
  Shape index(rank, 0);
  for (int64_t rows = numElements(size) / row; rows > 0; --rows) {
    int64_t source = 0, target = 0;
    for (size_t dim = 0; dim < rank; ++dim) {
      source = source * fromShape[dim] + low[dim] - fromAt[dim] + index[dim];
      target = target * toShape[dim] + low[dim] - toAt[dim] + index[dim];
    }
    std::memcpy(to + static_cast<size_t>(target) * width,
                from + static_cast<size_t>(source) * width, static_cast<size_t>(row) * width);
    if (covered)
      std::fill_n(covered->begin() + target, row, uint8_t(1));
    for (size_t dim = rank > 0 ? rank - 1 : 0; dim-- > 0;) {
      if (++index[dim] < size[dim])
        break;
      index[dim] = 0;
    }
  }
}

} // namespace shardc::rt
