//===- FloatClass.cpp - ONNX IsNaN and IsInf ------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <cmath>

namespace shardc::constfold {
namespace {

/// A Bool tensor of the float operand's shape, true where `test` holds.
template <typename Test>
Result<HostTensor> classify(const char *name, const HostTensor &operand, Test test) {
  if (auto error = detail::checkOperand(operand, "operand"))
    return *error;
  if (!isFloat(operand.type))
    return fail(std::string(name) + " needs a float operand but got " +
                typeName(operand.type));
  HostTensor out{ScalarType::Bool, operand.shape, {}, {}};
  out.ints.reserve(operand.floats.size());
  for (double value : operand.floats)
    out.ints.push_back(test(value) ? 1 : 0);
  return out;
}

} // namespace

Result<HostTensor> isNaN(const HostTensor &operand) {
  return classify("is_nan", operand, [](double x) { return std::isnan(x); });
}

Result<HostTensor> isInf(const HostTensor &operand, bool detectPositive,
                         bool detectNegative) {
  return classify("is_inf", operand, [&](double x) {
    return std::isinf(x) && (x > 0 ? detectPositive : detectNegative);
  });
}

} // namespace shardc::constfold
