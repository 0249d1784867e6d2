//===- FloatClass.cpp - ONNX IsNaN and IsInf ------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <cmath>

namespace shardc::constfold {
namespace {

/// A Bool tensor of the float operand's shape, true where `test` holds.
template <typename Test>
StatusOr<HostTensor> classify(const char *name, const HostTensor &operand, Test test) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (!isFloat(operand.type))
    return Status::error(std::string(name) + " needs a float operand but got " +
                         typeName(operand.type));
  HostTensor out{ScalarType::Bool, operand.shape, {}, {}};
  out.ints.reserve(operand.floats.size());
  for (double value : operand.floats)
    out.ints.push_back(test(value) ? 1 : 0);
  return out;
}

} // namespace

StatusOr<HostTensor> isNaN(const HostTensor &operand) {
  return classify("is_nan", operand, [](double x) { return std::isnan(x); });
}

StatusOr<HostTensor> isInf(const HostTensor &operand, bool detectPositive, bool detectNegative) {
  return classify("is_inf", operand, [&](double x) {
    return std::isinf(x) && (x > 0 ? detectPositive : detectNegative);
  });
}

} // namespace shardc::constfold
