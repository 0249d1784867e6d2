//===- Rotary.cpp - rotary position embedding ------------------------------===//
#include "runtime/cpu/Attention.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

namespace shardc::rt::cpu {
namespace {

using namespace detail;

template <typename T>
void rotaryAs(const TensorView &input, const TensorView &cosTable,
              const TensorView &sinTable, bool interleaved, const TensorView &out) {
  using C = ComputeT<T>;
  const int64_t features = input.shape.back(), rotated = cosTable.shape.back();
  const int64_t half = rotated / 2;
  const Shape rowsShape(input.shape.begin(), input.shape.end() - 1);
  const Shape tableShape(cosTable.shape.begin(), cosTable.shape.end() - 1);
  const int64_t rows = numElements(rowsShape);
  // Operand 0 walks the input's rows, operand 1 the table row each one uses
  // (strides in rows; 0 where the table broadcasts, e.g. over heads).
  const Walk<2> walk = Walk<2>::make(
      rowsShape, {rowMajorStrides(rowsShape), broadcastStrides(tableShape, rowsShape)});
  const T *in = input.as<const T>();
  const T *cosData = cosTable.as<const T>();
  const T *sinData = sinTable.as<const T>();
  T *result = out.as<T>();
  const bool inPlace = input.data == out.data;

  parallelFor(rows, features * 2, [&](int64_t begin, int64_t end) {
    walk.run(begin, end, {0, 0}, [&](const std::array<int64_t, 2> &at, int64_t n) {
      for (int64_t e = 0; e < n; ++e) {
        const int64_t row = at[0] + e * walk.innerStride(0);
        const int64_t tableRow = at[1] + e * walk.innerStride(1);
        const T *x = in + row * features;
        T *y = result + row * features;
        const T *c = cosData + tableRow * rotated;
        const T *s = sinData + tableRow * rotated;
        // Both members of a pair are read before either is written, so the
        // rotation is safe in place.
        for (int64_t p = 0; p < half; ++p) {
          const int64_t a = interleaved ? 2 * p : p;
          const int64_t b = interleaved ? 2 * p + 1 : p + half;
          const C xa = load(x[a]), xb = load(x[b]);
          y[a] = store<T>(xa * C(load(c[a])) - xb * C(load(s[a])));
          y[b] = store<T>(xb * C(load(c[b])) + xa * C(load(s[b])));
        }
        if (!inPlace)
          for (int64_t j = rotated; j < features; ++j)
            y[j] = x[j];
      }
    });
  });
}

} // namespace

Status rotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
              bool interleaved, const TensorView &out) {
  RotaryDims dims;
  SHARDC_KERNEL_TRY(checkRotary(input, cos, sin, out, nullptr, dims));
  if (input.numel() == 0)
    return Status::success();
  dispatchFloat(input.dtype, [&](auto tag) {
    rotaryAs<decltype(tag)>(input, cos, sin, interleaved, out);
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
