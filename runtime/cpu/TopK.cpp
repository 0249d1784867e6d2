//===- TopK.cpp - the k largest or smallest elements along an axis ---------===//
#include "runtime/cpu/Reduction.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// The value an element is ordered by: F16/BF16 as their float, Bool as 0/1.
template <typename T> auto key(T value) {
  if constexpr (std::is_same_v<T, Bool8>)
    return int(value.value != 0);
  else if constexpr (kIsFloat<T>)
    return load(value);
  else
    return value;
}

/// "a orders above b", with NaN above every number so that the comparison
/// below is a strict weak order even with NaNs (std::partial_sort needs one).
template <typename K> bool above(K a, K b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a))
      return !std::isnan(b);
    return !std::isnan(b) && a > b;
  } else {
    return a > b;
  }
}

template <typename T>
void topkAs(const T *in, T *values, int64_t *indices, int64_t outer, int64_t dim,
            int64_t inner, int64_t k, bool largest) {
  const int64_t rows = outer * inner;
  parallelFor(rows, dim * 8, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> order(static_cast<size_t>(dim));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t o = row / inner, i = row % inner;
      const T *x = in + o * dim * inner + i;
      auto first = [&](int64_t a, int64_t b) {
        const auto va = key(x[a * inner]), vb = key(x[b * inner]);
        if (largest ? above(va, vb) : above(vb, va))
          return true;
        if (largest ? above(vb, va) : above(va, vb))
          return false;
        return a < b; // ties: the lower index first, deterministically
      };
      std::iota(order.begin(), order.end(), int64_t(0));
      std::partial_sort(order.begin(), order.begin() + k, order.end(), first);
      T *v = values + o * k * inner + i;
      int64_t *p = indices + o * k * inner + i;
      for (int64_t r = 0; r < k; ++r) {
        v[r * inner] = x[order[size_t(r)] * inner];
        p[r * inner] = order[size_t(r)];
      }
    }
  });
}

} // namespace

Status topk(const TensorView &input, int64_t k, int64_t axis, bool largest,
            bool /*sorted: the result always is*/, const TensorView &values,
            const TensorView &indices) {
  SHARDC_KERNEL_TRY(checkTopK(input, k, axis, values, indices));
  if (values.numel() == 0)
    return Status::success();
  const int64_t outer = product(input.shape, 0, size_t(axis));
  const int64_t dim = input.shape[size_t(axis)];
  const int64_t inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  dispatchAll(input.dtype, [&](auto tag) {
    using T = decltype(tag);
    topkAs(input.as<const T>(), values.as<T>(), indices.as<int64_t>(), outer, dim,
           inner, k, largest);
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
