//===- Gather.cpp - ONNX Gather -------------------------------------------===//

#include "dialects/Graph/ConstEval/Indexing.h"

#include "dialects/Graph/ConstEval/IndexSupport.h"
#include "dialects/Graph/ConstEval/OpSupport.h"

#include <algorithm>

namespace shardc::constfold {

StatusOr<HostTensor> gather(const HostTensor &data, const HostTensor &indices, int64_t axis) {
  if (Status status = detail::checkIndexOperands("gather", data, indices, nullptr, axis); !status)
    return status;

  // Check and resolve all indices up front so the copy loop cannot fail.
  const int64_t dim = data.shape[size_t(axis)];
  if (Status status = detail::checkAxisIndices("gather", indices, axis, dim); !status)
    return status;
  std::vector<int64_t> positions(indices.ints);
  for (int64_t &index : positions)
    if (index < 0)
      index += dim;

  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  StatusOr<HostTensor> out = detail::allocate(data.type, shape);
  if (!out)
    return out;

  // Viewed as [outer, dim, inner], each (outer, index) pair copies one
  // contiguous block of `inner` elements.
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < data.shape.size(); ++d)
    inner *= data.shape[d];
  detail::withStorage(data, *out, [&](const auto &in, auto &result) {
    auto destination = result.begin();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t position : positions) {
        std::copy_n(in.begin() + (o * dim + position) * inner, inner,
                    destination);
        destination += inner;
      }
  });
  return out;
}

} // namespace shardc::constfold
