//===- Normalization.cpp - layer_norm and rms_norm -------------------------===//
#include "runtime/cpu/Normalization.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/Parallel.h"

#include <cmath>
#include <optional>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// A scale or bias as n contiguous elements of the normalized dims: the
/// tensor itself when it already has n elements (then its dims equal the
/// normalized ones up to 1s, so its order is the same), else a broadcast copy.
template <typename T> class Parameter {
public:
  Parameter(const TensorView &tensor, const Shape &normalized, int64_t n) {
    if (tensor.numel() == n) {
      data_ = tensor.as<const T>();
      return;
    }
    expanded_.resize(size_t(n));
    const Walk<2> walk = Walk<2>::make(
        normalized, {rowMajorStrides(normalized), broadcastStrides(tensor.shape, normalized)});
    stridedCopy(sizeof(T), expanded_.data(), tensor.data, 0, walk, n);
    data_ = expanded_.data();
  }
  const T *data() const { return data_; }

private:
  const T *data_ = nullptr;
  std::vector<T> expanded_;
};

Status checkParameter(const char *op, const char *role, const TensorView &param,
                      const TensorView &input, const Shape &normalized) {
  SHARDC_KERNEL_TRY(checkTensor(op, role, param));
  SHARDC_KERNEL_TRY(checkDType(op, role, param, input.dtype));
  if (!broadcastsTo(param.shape, normalized))
    return fail(op, std::string(role) + " shape does not fit the normalized dims; expected "
                    "to broadcast to " + str(normalized) + " but got " + str(param.shape));
  return Status::success();
}

template <typename T>
void layerNormAs(const TensorView &input, const TensorView &scale, const TensorView *bias,
                 int64_t axis, double epsilon, const TensorView &out) {
  using C = ComputeT<T>;
  const Shape normalized(input.shape.begin() + axis, input.shape.end());
  const int64_t n = numElements(normalized);
  const int64_t rows = product(input.shape, 0, size_t(axis));
  const Parameter<T> gamma(scale, normalized, n);
  std::optional<Parameter<T>> beta;
  if (bias)
    beta.emplace(*bias, normalized, n);
  const T *in = input.as<const T>();
  T *result = out.as<T>();
  parallelFor(rows, n * 4, [&](int64_t begin, int64_t end) {
    const T *g = gamma.data();
    const T *b = beta ? beta->data() : nullptr;
    for (int64_t r = begin; r < end; ++r) {
      const T *x = in + r * n;
      T *y = result + r * n;
      double sum = 0.0;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < n; ++i)
        sum += double(load(x[i]));
      const double mean = sum / double(n);
      double squares = 0.0;
#pragma omp simd reduction(+ : squares)
      for (int64_t i = 0; i < n; ++i) {
        const double d = double(load(x[i])) - mean;
        squares += d * d;
      }
      // The mean as an unevaluated sum hi + lo of two compute-type values:
      // rounding it to fp32 alone would shift every output by up to half an
      // ulp of the mean, which is large next to a small spread (x near 1e4
      // with noise 1e-2 would be off by ~10% of a standard deviation).
      // x - hi is exact when x is near the mean (Sterbenz), and lo restores
      // the rest, so centring costs two fp32 subtractions.
      const C hi = C(mean), lo = C(mean - double(hi));
      const C rstd = C(1.0 / std::sqrt(squares / double(n) + epsilon));
      if (b) {
        for (int64_t i = 0; i < n; ++i)
          y[i] = store<T>(((C(load(x[i])) - hi) - lo) * rstd * C(load(g[i])) + C(load(b[i])));
      } else {
        for (int64_t i = 0; i < n; ++i)
          y[i] = store<T>(((C(load(x[i])) - hi) - lo) * rstd * C(load(g[i])));
      }
    }
  });
}

template <typename T>
void rmsNormAs(const TensorView &input, const TensorView &scale, int64_t axis,
               double epsilon, const TensorView &out) {
  using C = ComputeT<T>;
  const Shape normalized(input.shape.begin() + axis, input.shape.end());
  const int64_t n = numElements(normalized);
  const int64_t rows = product(input.shape, 0, size_t(axis));
  const Parameter<T> gamma(scale, normalized, n);
  const T *in = input.as<const T>();
  T *result = out.as<T>();
  parallelFor(rows, n * 3, [&](int64_t begin, int64_t end) {
    const T *g = gamma.data();
    for (int64_t r = begin; r < end; ++r) {
      const T *x = in + r * n;
      T *y = result + r * n;
      double squares = 0.0;
#pragma omp simd reduction(+ : squares)
      for (int64_t i = 0; i < n; ++i) {
        const double v = double(load(x[i]));
        squares += v * v;
      }
      const C rstd = C(1.0 / std::sqrt(squares / double(n) + epsilon));
      for (int64_t i = 0; i < n; ++i)
        y[i] = store<T>(C(load(x[i])) * rstd * C(load(g[i])));
    }
  });
}

} // namespace

Status layerNorm(const TensorView &input, const TensorView &scale, const TensorView *bias,
                 int64_t axis, double epsilon, const TensorView &out) {
  const char *name = "layer_norm";
  SHARDC_KERNEL_TRY(checkAlongAxis(name, input, axis, out, nullptr));
  const Shape normalized(input.shape.begin() + axis, input.shape.end());
  SHARDC_KERNEL_TRY(checkParameter(name, "scale", scale, input, normalized));
  if (bias)
    SHARDC_KERNEL_TRY(checkParameter(name, "bias", *bias, input, normalized));
  if (input.numel() == 0)
    return Status::success();
  dispatchFloat(input.dtype, [&](auto tag) {
    layerNormAs<decltype(tag)>(input, scale, bias, axis, epsilon, out);
  });
  return Status::success();
}

Status rmsNorm(const TensorView &input, const TensorView &scale, int64_t axis,
               double epsilon, const TensorView &out) {
  const char *name = "rms_norm";
  SHARDC_KERNEL_TRY(checkAlongAxis(name, input, axis, out, nullptr));
  const Shape normalized(input.shape.begin() + axis, input.shape.end());
  SHARDC_KERNEL_TRY(checkParameter(name, "scale", scale, input, normalized));
  if (input.numel() == 0)
    return Status::success();
  dispatchFloat(input.dtype, [&](auto tag) {
    rmsNormAs<decltype(tag)>(input, scale, axis, epsilon, out);
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
