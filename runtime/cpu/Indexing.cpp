//===- Indexing.cpp - gather, scatter_elements, trilu ----------------------===//
#include "runtime/cpu/Indexing.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/IndexingSupport.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cstring>

namespace shardc::rt::cpu {

namespace {
using namespace detail;
} // namespace

Status gather(const TensorView &data, const TensorView &indices, int64_t axis,
              const TensorView &out) {
  const char *name = "gather";
  SHARDC_KERNEL_TRY(checkGather(data, indices, axis, out));
  const int64_t dim = data.shape[size_t(axis)];
  SHARDC_KERNEL_TRY(checkIndices(name, indices, axis, dim));
  if (out.numel() == 0)
    return Status::success();

  // data as [outer, dim, inner]: each (outer, index) copies one contiguous
  // slice of `inner` elements.
  const int64_t outer = product(data.shape, 0, size_t(axis));
  const int64_t inner = product(data.shape, size_t(axis) + 1, data.shape.size());
  const int64_t count = indices.numel();
  dispatchBySize(data.dtype, [&](auto tag) {
    using U = decltype(tag);
    const U *src = data.as<const U>();
    U *dst = out.as<U>();
    parallelFor(outer * count, inner, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / count;
        int64_t index = indexAt(indices, task % count);
        if (index < 0)
          index += dim;
        const U *from = src + (o * dim + index) * inner;
        U *to = dst + task * inner;
        if (inner == 1)
          *to = *from;
        else
          std::memcpy(to, from, size_t(inner) * sizeof(U));
      }
    });
  });
  return Status::success();
}

Status scatterElements(const TensorView &data, const TensorView &indices,
                       const TensorView &updates, int64_t axis,
                       ScatterReduction reduction, const TensorView &out) {
  const char *name = "scatter_elements";
  SHARDC_KERNEL_TRY(checkScatterElements(data, indices, updates, axis, reduction, out));
  const int64_t dim = data.shape[size_t(axis)];
  SHARDC_KERNEL_TRY(checkIndices(name, indices, axis, dim));
  copyDataToResult(data, out);
  if (indices.numel() == 0)
    return Status::success();

  // Lines: the index positions with all but `axis` fixed. Operand 0 is the
  // line's first position in indices/updates, operand 1 its data offset
  // without the axis term. Distinct lines hit distinct targets.
  Shape lineShape = indices.shape, indexStrides = rowMajorStrides(indices.shape);
  Shape dataStrides = rowMajorStrides(data.shape);
  const int64_t length = lineShape[size_t(axis)];
  const int64_t indexAxisStride = indexStrides[size_t(axis)];
  const int64_t dataAxisStride = dataStrides[size_t(axis)];
  lineShape.erase(lineShape.begin() + axis);
  indexStrides.erase(indexStrides.begin() + axis);
  dataStrides.erase(dataStrides.begin() + axis);
  const Walk<2> walk = Walk<2>::make(lineShape, {indexStrides, dataStrides});
  const int64_t lines = numElements(lineShape);

  dispatchAll(data.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *values = updates.as<const T>();
    T *result = out.as<T>();
    parallelFor(lines, length, [&](int64_t begin, int64_t end) {
      walk.run(begin, end, {0, 0}, [&](const std::array<int64_t, 2> &at, int64_t n) {
        for (int64_t e = 0; e < n; ++e) {
          const int64_t position = at[0] + e * walk.innerStride(0);
          const int64_t target = at[1] + e * walk.innerStride(1);
          for (int64_t a = 0; a < length; ++a) {
            const int64_t p = position + a * indexAxisStride;
            int64_t index = indexAt(indices, p);
            if (index < 0)
              index += dim;
            T &slot = result[target + index * dataAxisStride];
            slot = combine(reduction, slot, values[p]);
          }
        }
      });
    });
  });
  return Status::success();
}

Status trilu(const TensorView &input, int64_t k, bool upper, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkTrilu(input, out));
  if (input.numel() == 0)
    return Status::success();
  const int64_t rows = input.shape[input.shape.size() - 2], cols = input.shape.back();
  const int64_t matrixRows = input.numel() / cols; // all rows of all matrices
  // An all-zero element is 0 in every type (+0.0 for the floats).
  dispatchBySize(input.dtype, [&](auto tag) {
    using U = decltype(tag);
    const U *in = input.as<const U>();
    U *result = out.as<U>();
    parallelFor(matrixRows, cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % rows;
        // j - i lies in (-rows, cols): comparing it with any k is safe.
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = upper ? j - i >= k : j - i <= k;
          result[r * cols + j] = keep ? in[r * cols + j] : U(0);
        }
      }
    });
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
