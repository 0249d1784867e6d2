//===- Split.cpp - ONNX Split with explicit sizes -------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>

namespace shardc::constfold {

StatusOr<std::vector<HostTensor>> split(const HostTensor &operand, int64_t axis,
                                        const std::vector<int64_t> &sizes) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (Status status = detail::checkAxis(axis, operand.rank()); !status)
    return status;
  const int64_t dim = operand.shape[size_t(axis)];
  int64_t total = 0;
  for (int64_t size : sizes) {
    // Checking as we go keeps the running total from overflowing.
    if (size < 0 || size > dim - total)
      return Status::error("split sizes " + formatShape(sizes) + " do not add up to " +
                           std::to_string(dim) + ", the size of axis " + std::to_string(axis) +
                           " of " + formatShape(operand.shape));
    total += size;
  }
  if (total != dim)
    return Status::error("split sizes " + formatShape(sizes) + " do not add up to " +
                         std::to_string(dim) + ", the size of axis " + std::to_string(axis) +
                         " of " + formatShape(operand.shape));

  // Viewed as [outer, dim * inner], each piece takes one contiguous block of
  // every row: the inverse of concat.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= operand.shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < operand.shape.size(); ++d)
    inner *= operand.shape[d];
  const int64_t row = dim * inner;

  std::vector<HostTensor> pieces;
  pieces.reserve(sizes.size());
  int64_t column = 0;
  for (int64_t size : sizes) {
    Shape shape = operand.shape;
    shape[size_t(axis)] = size;
    StatusOr<HostTensor> piece = detail::allocate(operand.type, shape);
    if (!piece)
      return Status::error(piece.message());
    const int64_t block = size * inner;
    detail::withStorage(operand, *piece, [&](const auto &in, auto &out) {
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(in.begin() + o * row + column, block,
                    out.begin() + o * block);
    });
    column += block;
    pieces.push_back(std::move(*piece));
  }
  return pieces;
}

} // namespace shardc::constfold
