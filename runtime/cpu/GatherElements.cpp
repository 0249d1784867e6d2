//===- GatherElements.cpp - gather_elements -------------------------------===//
#include "runtime/cpu/Indexing.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/IndexingSupport.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

namespace shardc::rt::cpu {

using namespace detail;

Status gatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                      const TensorView &out) {
  const char *name = "gather_elements";
  SHARDC_KERNEL_TRY(checkGatherElements(data, indices, axis, out));
  const int64_t dim = data.shape[size_t(axis)];
  SHARDC_KERNEL_TRY(checkIndices(name, indices, axis, dim));
  const int64_t count = out.numel();
  if (count == 0)
    return Status::success();

  // Operand 0 is a position in indices and out (one shape, row-major),
  // operand 1 its offset in data without the axis term.
  Shape dataStrides = rowMajorStrides(data.shape);
  const int64_t axisStride = dataStrides[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  const Walk<2> walk = Walk<2>::make(indices.shape, {rowMajorStrides(indices.shape), dataStrides});
  dispatchBySize(data.dtype, [&](auto tag) {
    using U = decltype(tag);
    const U *src = data.as<const U>();
    U *dst = out.as<U>();
    parallelFor(count, 2, [&](int64_t begin, int64_t end) {
      walk.run(begin, end, {0, 0}, [&](const std::array<int64_t, 2> &at, int64_t n) {
        for (int64_t e = 0; e < n; ++e) {
          const int64_t position = at[0] + e * walk.innerStride(0);
          int64_t index = indexAt(indices, position);
          if (index < 0)
            index += dim;
          dst[position] = src[at[1] + e * walk.innerStride(1) + index * axisStride];
        }
      });
    });
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
