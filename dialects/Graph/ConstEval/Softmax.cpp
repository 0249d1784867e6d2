//===- Softmax.cpp - ONNX Softmax (opset >= 13) ---------------------------===//

#include "dialects/Graph/ConstEval/Reduction.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardc::constfold {

StatusOr<HostTensor> softmax(const HostTensor &operand, int64_t axis) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (!isFloat(operand.type))
    return Status::error(std::string("softmax needs a float operand but got ") +
                         typeName(operand.type));
  if (Status status = detail::checkAxis(axis, operand.rank()); !status)
    return status;

  // Viewed as [outer, dim, inner]: each (outer, inner) pair is one softmax
  // row of `dim` elements spaced `inner` apart.
  const int64_t dim = operand.shape[size_t(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= operand.shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < operand.shape.size(); ++d)
    inner *= operand.shape[d];

  HostTensor out = operand;
  // With no elements a dim may still be huge: do not size buffers by it.
  if (out.numElements() == 0)
    return out;
  std::vector<double> &values = out.floats;
  // Each outer block is a [dim, inner] matrix whose columns are independent
  // softmax rows. Sweeping it row by row, with one running maximum and sum per
  // column, reads memory in order whatever the axis.
  std::vector<double> maximum(static_cast<size_t>(inner)),
      sum(static_cast<size_t>(inner));
  for (int64_t o = 0; o < outer; ++o) {
    double *block = values.data() + o * dim * inner;
    // Subtracting the column maximum makes every exponent <= 0: no overflow,
    // and the largest term is exactly 1, so the sum is at least 1.
    std::fill(maximum.begin(), maximum.end(),
              -std::numeric_limits<double>::infinity());
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < inner; ++i)
        maximum[size_t(i)] = std::max(maximum[size_t(i)], block[j * inner + i]);
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        double &x = block[j * inner + i];
        x = std::exp(x - maximum[size_t(i)]);
        sum[size_t(i)] += x;
      }
    for (int64_t j = 0; j < dim; ++j)
      for (int64_t i = 0; i < inner; ++i)
        block[j * inner + i] /= sum[size_t(i)];
  }
  detail::roundAll(values, out.type);
  return out;
}

} // namespace shardc::constfold
