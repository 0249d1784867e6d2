//===- GatherElements.cpp - ONNX GatherElements ---------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

namespace shardc::constfold {

Result<HostTensor> gatherElements(const HostTensor &data,
                                  const HostTensor &indices, int64_t axis) {
  if (auto error = detail::checkOperand(data, "data"))
    return *error;
  if (auto error = detail::checkOperand(indices, "indices"))
    return *error;
  if (auto error = detail::checkAxis(axis, data.rank()))
    return *error;
  if (!isInteger(indices.type))
    return fail(std::string("gather_elements indices must have an integer type but got ") +
                typeName(indices.type));
  bool fits = indices.rank() == data.rank();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  if (!fits)
    return fail("gather_elements indices " + formatShape(indices.shape) +
                " do not fit data " + formatShape(data.shape) + " outside axis " +
                std::to_string(axis));

  const int64_t dim = data.shape[size_t(axis)];
  for (int64_t index : indices.ints)
    if (index < -dim || index >= dim)
      return fail("gather_elements index " + std::to_string(index) +
                  " is out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(dim));

  Result<HostTensor> out = detail::allocate(data.type, indices.shape);
  if (!out)
    return out;
  // A position's data offset is its offset without the axis term (stride 0
  // there) plus index * axis stride.
  Shape dataStrides = rowMajorStrides(data.shape);
  const int64_t axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  detail::withStorage(data, *out, [&](const auto &in, auto &result) {
    detail::forEachStrided<1>(
        indices.shape, {dataStrides}, {0},
        [&](int64_t i, const std::array<int64_t, 1> &at) {
          int64_t index = indices.ints[size_t(i)];
          if (index < 0)
            index += dim;
          result[size_t(i)] = in[size_t(at[0] + index * axisStride)];
        });
  });
  return out;
}

} // namespace shardc::constfold
