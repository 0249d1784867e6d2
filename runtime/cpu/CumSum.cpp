//===- CumSum.cpp - the running sum along an axis -------------------------===//
#include "runtime/cpu/Reduction.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <algorithm>
#include <vector>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// Columns of the inner dims scanned together: the loads of one step along
/// the axis are then contiguous, and the sums stay in L1.
constexpr int64_t kColumns = 256;

/// Scans each line of [outer, dim, inner] with sums of type Acc (double for
/// floats, uint64_t for integers, which wraps like the element type once
/// converted back).
template <typename T, typename Acc>
void scan(const TensorView &input, const ScanDims &dims, bool exclusive, bool reverse,
          const TensorView &out) {
  const T *in = input.as<const T>();
  T *result = out.as<T>();
  const int64_t blocks = (dims.inner + kColumns - 1) / kColumns;
  parallelFor(dims.outer * blocks, dims.dim * kColumns, [&](int64_t begin, int64_t end) {
    std::vector<Acc> sums(static_cast<size_t>(kColumns));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / blocks, first = task % blocks * kColumns;
      const int64_t width = std::min(kColumns, dims.inner - first);
      std::fill(sums.begin(), sums.begin() + width, Acc(0));
      for (int64_t step = 0; step < dims.dim; ++step) {
        const int64_t j = reverse ? dims.dim - 1 - step : step;
        const int64_t row = (o * dims.dim + j) * dims.inner + first;
        for (int64_t c = 0; c < width; ++c) {
          // Read before writing: out may be the input itself.
          const T x = in[row + c];
          Acc value;
          if constexpr (kIsFloat<T>)
            value = Acc(load(x));
          else
            value = Acc(int64_t(x));
          if (!exclusive)
            sums[size_t(c)] += value;
          if constexpr (kIsFloat<T>)
            result[row + c] = store<T>(ComputeT<T>(sums[size_t(c)]));
          else
            result[row + c] = wrapTo<T>(sums[size_t(c)]);
          if (exclusive)
            sums[size_t(c)] += value;
        }
      }
    }
  });
}

} // namespace

Status cumSum(const TensorView &input, int64_t axis, bool exclusive, bool reverse,
              const TensorView &out) {
  ScanDims dims;
  SHARDC_KERNEL_TRY(checkCumSum(input, axis, out, dims));
  if (input.numel() == 0)
    return Status::success();
  if (!dispatchFloat(input.dtype, [&](auto tag) {
        scan<decltype(tag), double>(input, dims, exclusive, reverse, out);
      }))
    dispatchInt(input.dtype, [&](auto tag) {
      scan<decltype(tag), uint64_t>(input, dims, exclusive, reverse, out);
    });
  return Status::success();
}

} // namespace shardc::rt::cpu
