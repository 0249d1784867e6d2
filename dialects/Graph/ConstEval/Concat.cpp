//===- Concat.cpp - ONNX Concat -------------------------------------------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>

namespace shardc::constfold {

StatusOr<HostTensor> concat(const std::vector<const HostTensor *> &inputs, int64_t axis) {
  if (inputs.empty())
    return Status::error("concat needs at least one input");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string role = "concat input " + std::to_string(i);
    if (!inputs[i])
      return Status::error(role + " is null");
    if (Status status = detail::checkOperand(*inputs[i], role.c_str()); !status)
      return status;
  }
  const HostTensor &first = *inputs.front();
  if (Status status = detail::checkAxis(axis, first.rank()); !status)
    return status;

  Shape shape = first.shape;
  shape[size_t(axis)] = 0;
  for (const HostTensor *input : inputs) {
    if (Status status = detail::checkSameType(first, *input, "concat"); !status)
      return status;
    bool compatible = input->rank() == first.rank();
    for (size_t d = 0; compatible && d < shape.size(); ++d)
      compatible = int64_t(d) == axis || input->shape[d] == first.shape[d];
    if (!compatible)
      return Status::error("concat along axis " + std::to_string(axis) +
                           " needs equal other dims but got " + formatShape(first.shape) + " and " +
                           formatShape(input->shape));
    int64_t &joined = shape[size_t(axis)];
    if (__builtin_add_overflow(joined, input->shape[size_t(axis)], &joined))
      return Status::error("concat result along axis " + std::to_string(axis) + " is too large");
  }
  StatusOr<HostTensor> out = detail::allocate(first.type, shape);
  if (!out)
    return out;

  // Viewed as [outer, axis * inner], the result interleaves one contiguous
  // block of each input per outer index.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t column = 0; // where the current input's block starts in a row
  const int64_t row = shape[size_t(axis)] * inner;
  for (const HostTensor *input : inputs) {
    const int64_t block = input->shape[size_t(axis)] * inner;
    detail::withStorage(*input, *out, [&](const auto &in, auto &result) {
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(in.begin() + o * block, block,
                    result.begin() + o * row + column);
    });
    column += block;
  }
  return out;
}

} // namespace shardc::constfold
