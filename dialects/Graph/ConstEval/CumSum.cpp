//===- CumSum.cpp - ONNX CumSum -------------------------------------------===//

#include "dialects/Graph/ConstEval/Reduction.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <type_traits>

namespace shardc::constfold {

StatusOr<HostTensor> cumSum(const HostTensor &operand, int64_t axis, bool exclusive, bool reverse) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (Status status = detail::checkAxis(axis, operand.rank()); !status)
    return status;
  const ScalarType type = operand.type;
  if (!isFloat(type) && type != ScalarType::I32 && type != ScalarType::I64)
    return Status::error(std::string("cumsum needs an int32, int64 or float operand but got ") +
                         typeName(type));

  // The operand as [outer, dim, inner]: each (outer, inner) pair is a line.
  const int64_t dim = operand.shape[size_t(axis)];
  const int64_t inner = rowMajorStrides(operand.shape)[size_t(axis)];
  const int64_t outer = dim * inner == 0 ? 0 : operand.numElements() / (dim * inner);
  HostTensor out = operand;
  auto scan = [&](const auto &in, auto &result, auto add) {
    using Value = std::decay_t<decltype(in[0])>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Value sum = 0;
        for (int64_t step = 0; step < dim; ++step) {
          const int64_t j = reverse ? dim - 1 - step : step;
          const size_t at = size_t((o * dim + j) * inner + i);
          const Value x = in[at];
          if (!exclusive)
            sum = add(sum, x);
          result[at] = sum;
          if (exclusive)
            sum = add(sum, x);
        }
      }
  };
  if (isFloat(type)) {
    scan(operand.floats, out.floats, [](double a, double b) { return a + b; });
    detail::roundAll(out.floats, type);
  } else {
    scan(operand.ints, out.ints,
         [type](int64_t a, int64_t b) { return wrapInt(type, uint64_t(a) + uint64_t(b)); });
  }
  return out;
}

} // namespace shardc::constfold
