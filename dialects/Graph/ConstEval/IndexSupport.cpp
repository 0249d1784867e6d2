//===- IndexSupport.cpp - What the gathers and scatters share -------------===//

#include "dialects/Graph/ConstEval/IndexSupport.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold::detail {

std::optional<Error> checkIndexOperands(const char *op, const HostTensor &data,
                                        const HostTensor &indices,
                                        const HostTensor *updates,
                                        std::optional<int64_t> axis) {
  if (auto error = checkOperand(data, "data"))
    return error;
  if (auto error = checkOperand(indices, "indices"))
    return error;
  if (updates)
    if (auto error = checkOperand(*updates, "updates"))
      return error;
  if (axis)
    if (auto error = checkAxis(*axis, data.rank()))
      return error;
  if (!isInteger(indices.type))
    return fail(std::string(op) + " indices must have an integer type but got " +
                typeName(indices.type));
  return std::nullopt;
}

bool fitsOutsideAxis(const HostTensor &indices, const HostTensor &data, int64_t axis) {
  bool fits = indices.rank() == data.rank();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  return fits;
}

std::optional<Error> checkAxisIndices(const char *op, const HostTensor &indices,
                                      int64_t axis, int64_t dim) {
  for (int64_t index : indices.ints)
    if (index < -dim || index >= dim)
      return fail(std::string(op) + " index " + std::to_string(index) +
                  " is out of range for axis " + std::to_string(axis) +
                  " of size " + std::to_string(dim));
  return std::nullopt;
}

} // namespace shardc::constfold::detail
