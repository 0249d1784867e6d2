//===- Trilu.cpp - ONNX Trilu ---------------------------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

StatusOr<HostTensor> trilu(const HostTensor &operand, int64_t k, bool upper) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (operand.rank() < 2)
    return Status::error("trilu needs a tensor of rank >= 2 but got " + formatShape(operand.shape));
  const int64_t rows = operand.shape[operand.shape.size() - 2];
  const int64_t cols = operand.shape.back();
  const int64_t count = operand.numElements();
  if (count == 0)
    return operand;
  const int64_t matrices = count / (rows * cols);

  // j - i is within (-rows, cols), so comparing it with any k cannot overflow.
  auto keep = [&](int64_t i, int64_t j) { return upper ? j - i >= k : j - i <= k; };
  HostTensor out = operand;
  auto zeroOutside = [&](auto &values) {
    for (int64_t m = 0; m < matrices; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          if (!keep(i, j))
            values[size_t((m * rows + i) * cols + j)] = 0;
  };
  if (isFloat(out.type))
    zeroOutside(out.floats);
  else
    zeroOutside(out.ints);
  return out;
}

} // namespace shardc::constfold
