//===- GatherElements.cpp - ONNX GatherElements ---------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

StatusOr<HostTensor> gatherElements(const HostTensor &data, const HostTensor &indices,
                                    int64_t axis) {
  const char *name = "gather_elements";
  if (Status status = detail::checkIndexOperands(name, data, indices, nullptr, axis); !status)
    return status;
  if (!detail::fitsOutsideAxis(indices, data, axis))
    return Status::error("gather_elements indices " + formatShape(indices.shape) +
                         " do not fit data " + formatShape(data.shape) + " outside axis " +
                         std::to_string(axis));

  if (Status status = detail::checkAxisIndices(name, indices, axis, data.shape[size_t(axis)]);
      !status)
    return status;

  StatusOr<HostTensor> out = detail::allocate(data.type, indices.shape);
  if (!out)
    return out;
  detail::withStorage(data, *out, [&](const auto &in, auto &result) {
    detail::forEachAxisTarget(data.shape, indices, axis, [&](int64_t i, int64_t target) {
      result[size_t(i)] = in[size_t(target)];
    });
  });
  return out;
}

} // namespace shardc::constfold
