//===- Softmax.cpp - softmax along one axis --------------------------------===//
//
// Viewed as [outer, dim, inner]. With inner == 1 (the usual last-axis case)
// each row is contiguous; otherwise a tile of up to kTile neighbouring columns
// is processed together so that every read is a contiguous segment. Both
// make three passes: maximum, exp(x - max) with the sum, and the scaling.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Reduction.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/VectorMath.h"

#include <cmath>
#include <limits>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

constexpr int64_t kTile = 64;

template <typename T>
void softmaxRows(const T *in, T *out, int64_t rows, int64_t dim) {
  using C = ComputeT<T>;
  parallelFor(rows, dim * 20, [&](int64_t begin, int64_t end) {
    // exp values are kept in the compute type until normalized: rounding
    // them to F16 first would round twice.
    std::vector<C> scratch;
    if constexpr (!std::is_same_v<T, C>)
      scratch.resize(size_t(dim));
    for (int64_t r = begin; r < end; ++r) {
      const T *x = in + r * dim;
      T *y = out + r * dim;
      C *e = nullptr;
      if constexpr (std::is_same_v<T, C>)
        e = y; // in place for fp32/fp64: out holds the exps, then the result
      else
        e = scratch.data();
      C maximum = -std::numeric_limits<C>::infinity();
      for (int64_t i = 0; i < dim; ++i)
        maximum = std::max(maximum, C(load(x[i])));
      double sum = 0.0;
      for (int64_t i = 0; i < dim; ++i) {
        e[i] = vmath::exp(C(load(x[i])) - maximum);
        sum += double(e[i]);
      }
      const C scale = C(1.0 / sum);
      for (int64_t i = 0; i < dim; ++i)
        y[i] = store<T>(e[i] * scale);
    }
  });
}

template <typename T>
void softmaxColumns(const T *in, T *out, int64_t outer, int64_t dim, int64_t inner) {
  using C = ComputeT<T>;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  parallelFor(outer * tiles, dim * kTile * 20, [&](int64_t begin, int64_t end) {
    std::vector<C> e(size_t(dim * kTile));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / tiles, j0 = task % tiles * kTile;
      const int64_t width = std::min(kTile, inner - j0);
      const T *x = in + o * dim * inner + j0;
      T *y = out + o * dim * inner + j0;
      C maximum[kTile];
      double sum[kTile];
      for (int64_t j = 0; j < width; ++j) {
        maximum[j] = -std::numeric_limits<C>::infinity();
        sum[j] = 0.0;
      }
      for (int64_t i = 0; i < dim; ++i)
        for (int64_t j = 0; j < width; ++j)
          maximum[j] = std::max(maximum[j], C(load(x[i * inner + j])));
      for (int64_t i = 0; i < dim; ++i)
        for (int64_t j = 0; j < width; ++j) {
          C v = vmath::exp(C(load(x[i * inner + j])) - maximum[j]);
          e[size_t(i * kTile + j)] = v;
          sum[j] += double(v);
        }
      for (int64_t i = 0; i < dim; ++i)
        for (int64_t j = 0; j < width; ++j)
          y[i * inner + j] = store<T>(C(double(e[size_t(i * kTile + j)]) / sum[j]));
    }
  });
}

} // namespace

Status softmax(const TensorView &input, int64_t axis, const TensorView &out) {
  const char *name = "softmax";
  SHARDC_KERNEL_TRY(checkAlongAxis(name, input, axis, out, nullptr));
  if (input.numel() == 0)
    return Status::success();
  const int64_t outer = product(input.shape, 0, size_t(axis));
  const int64_t dim = input.shape[size_t(axis)];
  const int64_t inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  dispatchFloat(input.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1)
      softmaxRows(input.as<const T>(), out.as<T>(), outer, dim);
    else
      softmaxColumns(input.as<const T>(), out.as<T>(), outer, dim, inner);
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
