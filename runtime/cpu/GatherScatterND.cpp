//===- GatherScatterND.cpp - gather_nd and scatter_nd ---------------------===//
#include "runtime/cpu/Indexing.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/IndexingSupport.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <algorithm>
#include <cstring>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// Fails on any tuple entry outside [-dims[j], dims[j]), naming it.
Status checkTuples(const char *op, const TensorView &indices, const IndexTupleDims &dims) {
  const int64_t k = int64_t(dims.dims.size()), count = indices.numel();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t dim = dims.dims[size_t(i % k)], index = indexAt(indices, i);
    if (index < -dim || index >= dim)
      return fail(op, "index " + std::to_string(index) + " (element " + std::to_string(i) +
                          ") is out of range for a dim of size " + std::to_string(dim));
  }
  return Status::success();
}

/// The element offset, within its batch, of the slice tuple t names.
int64_t tupleOffset(const TensorView &indices, const IndexTupleDims &dims, int64_t t) {
  const int64_t k = int64_t(dims.dims.size());
  int64_t offset = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t index = indexAt(indices, t * k + j);
    if (index < 0)
      index += dims.dims[size_t(j)];
    offset += index * dims.strides[size_t(j)];
  }
  return offset;
}

} // namespace

Status gatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                const TensorView &out) {
  const char *name = "gather_nd";
  IndexTupleDims dims;
  SHARDC_KERNEL_TRY(checkGatherND(data, indices, batchDims, out, dims));
  SHARDC_KERNEL_TRY(checkTuples(name, indices, dims));
  const int64_t tasks = dims.batches * dims.tuples;
  if (out.numel() == 0)
    return Status::success();
  // Task t copies the slice of tuple t (of batch t / tuples) to out's t-th slice.
  dispatchBySize(data.dtype, [&](auto tag) {
    using U = decltype(tag);
    const U *src = data.as<const U>();
    U *dst = out.as<U>();
    parallelFor(tasks, dims.slice, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const U *from = src + t / dims.tuples * dims.batchStride + tupleOffset(indices, dims, t);
        std::memcpy(dst + t * dims.slice, from, size_t(dims.slice) * sizeof(U));
      }
    });
  });
  return Status::success();
}

Status scatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                 ScatterReduction reduction, const TensorView &out) {
  const char *name = "scatter_nd";
  IndexTupleDims dims;
  SHARDC_KERNEL_TRY(checkScatterND(data, indices, updates, reduction, out, dims));
  if (!dims.dims.empty())
    SHARDC_KERNEL_TRY(checkTuples(name, indices, dims));
  copyDataToResult(data, out);
  if (dims.tuples == 0 || dims.slice == 0)
    return Status::success();

  // Threads split the slices' elements and each applies every tuple in
  // order to its share, so repeated tuples land in order.
  dispatchAll(data.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *values = updates.as<const T>();
    T *result = out.as<T>();
    parallelFor(dims.slice, dims.tuples, [&](int64_t begin, int64_t end) {
      for (int64_t t = 0; t < dims.tuples; ++t) {
        T *target = result + tupleOffset(indices, dims, t);
        const T *source = values + t * dims.slice;
        for (int64_t e = begin; e < end; ++e)
          target[e] = combine(reduction, target[e], source[e]);
      }
    });
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
