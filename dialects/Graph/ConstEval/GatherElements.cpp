//===- GatherElements.cpp - ONNX GatherElements ---------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"

namespace shardc::constfold {

Result<HostTensor> gatherElements(const HostTensor &data,
                                  const HostTensor &indices, int64_t axis) {
  const char *name = "gather_elements";
  if (auto error = detail::checkIndexOperands(name, data, indices, nullptr, axis))
    return *error;
  if (!detail::fitsOutsideAxis(indices, data, axis))
    return fail("gather_elements indices " + formatShape(indices.shape) +
                " do not fit data " + formatShape(data.shape) + " outside axis " +
                std::to_string(axis));

  if (auto error = detail::checkAxisIndices(name, indices, axis, data.shape[size_t(axis)]))
    return *error;

  Result<HostTensor> out = detail::allocate(data.type, indices.shape);
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
