//===- GatherND.cpp - ONNX GatherND ---------------------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>

namespace shardc::constfold {
namespace {

Status checkShapes(const HostTensor &data, const HostTensor &indices, int64_t batchDims) {
  const int64_t rank = data.rank(), indexRank = indices.rank();
  if (rank < 1 || indexRank < 1)
    return Status::error("gather_nd needs data and indices of rank >= 1 but got " +
                         formatShape(data.shape) + " and " + formatShape(indices.shape));
  if (batchDims < 0 || batchDims >= std::min(rank, indexRank))
    return Status::error("gather_nd batch_dims " + std::to_string(batchDims) +
                         " is out of range for ranks " + std::to_string(rank) + " and " +
                         std::to_string(indexRank));
  if (!std::equal(data.shape.begin(), data.shape.begin() + batchDims,
                  indices.shape.begin()))
    return Status::error("gather_nd batch dims of data " + formatShape(data.shape) +
                         " and indices " + formatShape(indices.shape) + " differ");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > rank - batchDims)
    return Status::error("gather_nd index tuples have " + std::to_string(k) +
                         " entries; expected 1 to " + std::to_string(rank - batchDims));
  return {};
}

} // namespace

StatusOr<HostTensor> gatherND(const HostTensor &data, const HostTensor &indices,
                              int64_t batchDims) {
  if (Status status = detail::checkIndexOperands("gather_nd", data, indices, nullptr, std::nullopt);
      !status)
    return status;
  if (Status status = checkShapes(data, indices, batchDims); !status)
    return status;

  const size_t b = size_t(batchDims), k = size_t(indices.shape.back());
  Shape shape(indices.shape.begin(), indices.shape.end() - 1);
  shape.insert(shape.end(), data.shape.begin() + int64_t(b + k), data.shape.end());
  StatusOr<HostTensor> out = detail::allocate(data.type, shape);
  if (!out)
    return out;

  // Each tuple names one contiguous slice of `slice` elements: its batch's
  // block of data plus sum_j index_j * stride of dim b + j.
  const Shape strides = rowMajorStrides(data.shape);
  const int64_t slice = strides[b + k - 1];
  const int64_t batchStride = strides[b] * data.shape[b];
  const int64_t tuples = shapeNumElements(Shape(indices.shape.begin(), indices.shape.end() - 1));
  const int64_t batches = shapeNumElements(Shape(data.shape.begin(), data.shape.begin() + int64_t(b)));
  const int64_t perBatch = batches == 0 ? 0 : tuples / batches;
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = (t / std::max<int64_t>(perBatch, 1)) * batchStride;
    for (size_t j = 0; j < k; ++j) {
      const int64_t dim = data.shape[b + j];
      int64_t index = indices.ints[size_t(t) * k + j];
      if (index < -dim || index >= dim)
        return Status::error("gather_nd index " + std::to_string(index) +
                             " is out of range for dim " + std::to_string(b + j) + " of size " +
                             std::to_string(dim));
      if (index < 0)
        index += dim;
      offset += index * strides[b + j];
    }
    offsets[size_t(t)] = offset;
  }
  detail::withStorage(data, *out, [&](const auto &in, auto &result) {
    for (int64_t t = 0; t < tuples; ++t)
      std::copy_n(in.begin() + offsets[size_t(t)], slice, result.begin() + t * slice);
  });
  return out;
}

} // namespace shardc::constfold
