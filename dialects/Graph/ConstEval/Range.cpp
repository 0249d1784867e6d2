//===- Range.cpp - ONNX Range ---------------------------------------------===//

#include "dialects/Graph/ConstEval/Generators.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>
#include <cmath>

namespace shardc::constfold {

StatusOr<HostTensor> rangeInt(ScalarType type, int64_t start, int64_t limit, int64_t delta) {
  if (!isInteger(type))
    return Status::error(std::string("rangeInt needs an integer type but got ") + typeName(type));
  for (int64_t operand : {start, limit, delta})
    if (!fitsIn(type, operand))
      return Status::error("range operand " + std::to_string(operand) + " does not fit " +
                           typeName(type));
  if (delta == 0)
    return Status::error("range delta is 0");

  // The distance and step as unsigned magnitudes in the direction of delta:
  // |limit - start| can be up to 2^64 - 1, which only uint64 holds.
  uint64_t count = 0;
  if (delta > 0 ? limit > start : limit < start) {
    uint64_t distance = delta > 0 ? uint64_t(limit) - uint64_t(start)
                                  : uint64_t(start) - uint64_t(limit);
    uint64_t step = delta > 0 ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
    count = distance / step + (distance % step != 0);
  }
  if (count > uint64_t(kMaxElements))
    return Status::error("range of " + std::to_string(count) +
                         " elements is more than the folding limit of " +
                         std::to_string(kMaxElements));
  StatusOr<HostTensor> out = detail::allocate(type, {int64_t(count)});
  if (!out)
    return out;
  // Every element lies in [start, limit), so the wrapping arithmetic gives the
  // exact value.
  for (uint64_t i = 0; i < count; ++i)
    out->ints[size_t(i)] =
        wrapInt(ScalarType::I64, uint64_t(start) + i * uint64_t(delta));
  return out;
}

StatusOr<HostTensor> rangeFloat(ScalarType type, double start, double limit, double delta) {
  if (!isFloat(type))
    return Status::error(std::string("rangeFloat needs a float type but got ") + typeName(type));
  if (!std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return Status::error("range operands must be finite");
  if (delta == 0)
    return Status::error("range delta is 0");
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  // Also rejects a NaN/inf count (e.g. a delta so small the quotient overflows).
  if (!(count <= double(kMaxElements)))
    return Status::error("range from " + std::to_string(start) + " to " + std::to_string(limit) +
                         " by " + std::to_string(delta) +
                         " has more elements than the folding limit of " +
                         std::to_string(kMaxElements));
  StatusOr<HostTensor> out = detail::allocate(type, {int64_t(count)});
  if (!out)
    return out;
  for (size_t i = 0; i < out->floats.size(); ++i)
    out->floats[i] = roundFloat(type, start + double(i) * delta);
  return out;
}

StatusOr<HostTensor> range(const HostTensor &start, const HostTensor &limit,
                           const HostTensor &delta) {
  const HostTensor *operands[] = {&start, &limit, &delta};
  const char *roles[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (Status status = detail::checkOperand(*operands[i], roles[i]); !status)
      return status;
    if (operands[i]->numElements() != 1)
      return Status::error(std::string("range ") + roles[i] + " must be a scalar but has shape " +
                           formatShape(operands[i]->shape));
    if (operands[i]->type != start.type)
      return Status::error(std::string("range operands must share one type but got ") +
                           typeName(start.type) + " and " + typeName(operands[i]->type));
  }
  if (isFloat(start.type))
    return rangeFloat(start.type, start.floats[0], limit.floats[0],
                      delta.floats[0]);
  if (isInteger(start.type))
    return rangeInt(start.type, start.ints[0], limit.ints[0], delta.ints[0]);
  return Status::error("range needs integer or float operands but got bool");
}

} // namespace shardc::constfold
