//===- Cast.cpp - ONNX Cast -----------------------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <cmath>
#include <sstream>

namespace shardc::constfold {

StatusOr<HostTensor> cast(const HostTensor &operand, ScalarType to) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  const ScalarType from = operand.type;
  HostTensor out{to, operand.shape, {}, {}};

  if (isFloat(from) && isFloat(to)) {
    out.floats = operand.floats;
    detail::roundAll(out.floats, to);
    return out;
  }
  if (!isFloat(from) && isFloat(to)) {
    out.floats.reserve(operand.ints.size());
    for (int64_t v : operand.ints)
      out.floats.push_back(intToFloat(to, v));
    return out;
  }
  if (!isFloat(from)) { // integer/bool -> integer/bool
    out.ints = operand.ints;
    detail::wrapAll(out.ints, to); // Bool: != 0; integers: two's complement
    return out;
  }

  // float -> integer/bool
  out.ints.reserve(operand.floats.size());
  for (double v : operand.floats) {
    if (to == ScalarType::Bool) {
      out.ints.push_back(v != 0); // NaN != 0 is true, as in C++ and numpy
      continue;
    }
    std::optional<int64_t> truncated = detail::truncateToInt(to, v);
    if (!truncated) {
      std::ostringstream message;
      message << "cannot cast " << typeName(from) << " value " << v << " to "
              << typeName(to) << ": not finite or out of range";
      return Status::error(message.str());
    }
    out.ints.push_back(*truncated);
  }
  return out;
}

} // namespace shardc::constfold
