//===- TopK.cpp - ONNX TopK -----------------------------------------------===//

#include "dialects/Graph/ConstEval/Reduction.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardc::constfold {
namespace {

// "a orders above b": the plain order, with NaN above every number (numpy's
// sort order), so that the comparator below is a strict weak order even with
// NaNs and std::partial_sort is well-defined.
bool above(int64_t a, int64_t b) { return a > b; }
bool above(double a, double b) {
  if (std::isnan(a))
    return !std::isnan(b);
  return !std::isnan(b) && a > b;
}

} // namespace

StatusOr<TopKResult> topk(const HostTensor &operand, int64_t k, int64_t axis, bool largest,
                          bool /*sorted: the result always is*/) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (operand.type == ScalarType::Bool)
    return Status::error("topk needs an integer or float operand but got bool");
  if (Status status = detail::checkAxis(axis, operand.rank()); !status)
    return status;
  const int64_t dim = operand.shape[size_t(axis)];
  if (k < 0 || k > dim)
    return Status::error("topk k = " + std::to_string(k) + " is out of range for axis " +
                         std::to_string(axis) + " of size " + std::to_string(dim));

  Shape shape = operand.shape;
  shape[size_t(axis)] = k;
  StatusOr<HostTensor> values = detail::allocate(operand.type, shape);
  if (!values)
    return Status::error(values.message());
  StatusOr<HostTensor> indices = detail::allocate(ScalarType::I64, shape);
  if (!indices)
    return Status::error(indices.message());

  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= operand.shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < operand.shape.size(); ++d)
    inner *= operand.shape[d];

  // With no elements a dim may still be huge: do not size buffers by it.
  if (operand.numElements() == 0)
    return TopKResult{std::move(*values), std::move(*indices)};
  std::vector<int64_t> order(static_cast<size_t>(dim)); // reused for every row
  detail::withStorage(operand, *values, [&](const auto &in, auto &out) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * dim * inner + i;
        auto value = [&](int64_t j) { return in[size_t(base + j * inner)]; };
        // Strictly ordered by value, then by index: ties keep the lower index
        // first, and the order is total, so the result is deterministic.
        auto first = [&](int64_t a, int64_t b) {
          auto va = value(a), vb = value(b);
          if (largest ? above(va, vb) : above(vb, va))
            return true;
          if (largest ? above(vb, va) : above(va, vb))
            return false;
          return a < b;
        };
        std::iota(order.begin(), order.end(), int64_t(0));
        std::partial_sort(order.begin(), order.begin() + k, order.end(), first);
        const int64_t outBase = o * k * inner + i;
        for (int64_t r = 0; r < k; ++r) {
          out[size_t(outBase + r * inner)] = value(order[size_t(r)]);
          indices->ints[size_t(outBase + r * inner)] = order[size_t(r)];
        }
      }
    }
  });
  return TopKResult{std::move(*values), std::move(*indices)};
}

} // namespace shardc::constfold
