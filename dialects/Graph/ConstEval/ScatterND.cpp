//===- ScatterND.cpp - ONNX ScatterND -------------------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/ScatterCombine.h"

namespace shardc::constfold {
namespace {

Status checkShapes(const HostTensor &data, const HostTensor &indices, const HostTensor &updates) {
  if (Status status = detail::checkSameType(data, updates, "scatter_nd"); !status)
    return status;
  if (data.rank() < 1 || indices.rank() < 1)
    return Status::error("scatter_nd needs data and indices of rank >= 1 but got " +
                         formatShape(data.shape) + " and " + formatShape(indices.shape));
  const int64_t k = indices.shape.back();
  if (k < 0 || k > data.rank())
    return Status::error("scatter_nd index tuples have " + std::to_string(k) +
                         " entries; expected at most " + std::to_string(data.rank()));
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  if (updates.shape != expected)
    return Status::error("scatter_nd updates " + formatShape(updates.shape) +
                         " do not have the shape " + formatShape(expected) +
                         " (indices.shape[:-1] + data.shape[k:])");
  return {};
}

} // namespace

StatusOr<HostTensor> scatterND(const HostTensor &data, const HostTensor &indices,
                               const HostTensor &updates, ScatterReduction reduction) {
  if (Status status =
          detail::checkIndexOperands("scatter_nd", data, indices, &updates, std::nullopt);
      !status)
    return status;
  if (Status status = checkShapes(data, indices, updates); !status)
    return status;
  if (Status status = detail::checkReductionType(data, reduction, "scatter_nd"); !status)
    return status;

  // Resolve every tuple to the offset of its slice first, so that a bad
  // index fails before anything is written.
  const size_t k = size_t(indices.shape.back());
  const Shape strides = rowMajorStrides(data.shape);
  const int64_t slice = k == 0 ? data.numElements() : strides[k - 1];
  const int64_t tuples = shapeNumElements(Shape(indices.shape.begin(), indices.shape.end() - 1));
  std::vector<int64_t> offsets(size_t(tuples), 0);
  for (int64_t t = 0; t < tuples; ++t)
    for (size_t j = 0; j < k; ++j) {
      const int64_t dim = data.shape[j];
      int64_t index = indices.ints[size_t(t) * k + j];
      if (index < -dim || index >= dim)
        return Status::error("scatter_nd index " + std::to_string(index) +
                             " is out of range for dim " + std::to_string(j) + " of size " +
                             std::to_string(dim));
      offsets[size_t(t)] += (index < 0 ? index + dim : index) * strides[j];
    }

  HostTensor out = data;
  const ScalarType type = data.type;
  detail::withStorage(updates, out, [&](const auto &values, auto &result) {
    for (int64_t t = 0; t < tuples; ++t)
      for (int64_t e = 0; e < slice; ++e) {
        auto &target = result[size_t(offsets[size_t(t)] + e)];
        target = detail::combine(reduction, type, target, values[size_t(t * slice + e)]);
      }
  });
  return out;
}

} // namespace shardc::constfold
