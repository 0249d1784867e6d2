//===- IndexSupport.cpp - What the gathers and scatters share -------------===//

#include "dialects/Graph/ConstEval/IndexSupport.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold::detail {

Status checkIndexOperands(const char *op, const HostTensor &data, const HostTensor &indices,
                          const HostTensor *updates, std::optional<int64_t> axis) {
  if (Status status = checkOperand(data, "data"); !status)
    return status;
  if (Status status = checkOperand(indices, "indices"); !status)
    return status;
  if (updates)
    if (Status status = checkOperand(*updates, "updates"); !status)
      return status;
  if (axis)
    if (Status status = checkAxis(*axis, data.rank()); !status)
      return status;
  if (!isInteger(indices.type))
    return Status::error(std::string(op) + " indices must have an integer type but got " +
                         typeName(indices.type));
  return {};
}

bool fitsOutsideAxis(const HostTensor &indices, const HostTensor &data, int64_t axis) {
  bool fits = indices.rank() == data.rank();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  return fits;
}

Status checkAxisIndices(const char *op, const HostTensor &indices, int64_t axis, int64_t dim) {
  for (int64_t index : indices.ints)
    if (index < -dim || index >= dim)
      return Status::error(std::string(op) + " index " + std::to_string(index) +
                           " is out of range for axis " + std::to_string(axis) + " of size " +
                           std::to_string(dim));
  return {};
}

} // namespace shardc::constfold::detail
