//===- Cast.cpp - Conversions between every pair of element types ----------===//
#include "runtime/cpu/Elementwise.h"

#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// An integer as a float rounded to odd (see toFloatRoundToOdd), computed
/// from the integer itself: going through double would already round once
/// above 2^53.
float intToFloatRoundToOdd(int64_t value) {
  const uint64_t magnitude = value < 0 ? uint64_t(0) - uint64_t(value) : uint64_t(value);
  if (magnitude < (uint64_t(1) << 24))
    return float(value); // exact
  int width = 64;
  while (!(magnitude >> (width - 1)))
    --width;
  const int shift = width - 24;
  uint64_t mantissa = magnitude >> shift;
  if (magnitude & ((uint64_t(1) << shift) - 1))
    mantissa |= 1; // sticky: the dropped bits were not all zero
  const float result = std::ldexp(float(mantissa), shift); // both steps exact
  return value < 0 ? -result : result;
}

/// float-like -> float-like, one rounding.
template <typename To, typename From> To floatToFloat(From value) {
  if constexpr (std::is_same_v<To, double>) {
    return double(load(value));
  } else if constexpr (std::is_same_v<To, float>) {
    return float(load(value)); // from double: IEEE rounding, inf past the range
  } else {
    // To Half or BFloat16. From double, round to odd first so that the final
    // rounding is the only one that matters; float and the 16-bit formats
    // convert to float exactly.
    float wide;
    if constexpr (std::is_same_v<From, double>)
      wide = toFloatRoundToOdd(value);
    else
      wide = load(value);
    if constexpr (std::is_same_v<To, Half>)
      return toHalf(wide);
    else
      return toBFloat16(wide);
  }
}

template <typename To> To intToFloat(int64_t value) {
  if constexpr (std::is_same_v<To, double>)
    return double(value); // one rounding (above 2^53)
  else if constexpr (std::is_same_v<To, float>)
    return float(value); // one rounding
  else if constexpr (std::is_same_v<To, Half>)
    return toHalf(intToFloatRoundToOdd(value));
  else
    return toBFloat16(intToFloatRoundToOdd(value));
}

/// Truncation toward zero with NaN -> 0 and saturation at the type's range.
template <typename To> To floatToInt(double value) {
  if (value != value)
    return To(0);
  const double truncated = std::trunc(value);
  if (truncated <= double(std::numeric_limits<To>::min()))
    return std::numeric_limits<To>::min();
  // max() of int64 is 2^63 - 1, which rounds up to 2^63 in double; >= keeps
  // 2^63 itself (not representable) saturating.
  if (truncated >= double(std::numeric_limits<To>::max()))
    return std::numeric_limits<To>::max();
  return To(truncated);
}

template <typename To, typename From> To convert(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (std::is_same_v<To, Bool8>) {
    if constexpr (kIsFloat<From>)
      return Bool8{uint8_t(load(value) != 0)}; // NaN != 0: true
    else
      return Bool8{uint8_t(value != 0)};
  } else if constexpr (std::is_same_v<From, Bool8>) {
    const int64_t bit = value.value != 0;
    if constexpr (kIsFloat<To>)
      return intToFloat<To>(bit);
    else
      return To(bit);
  } else if constexpr (kIsFloat<From>) {
    if constexpr (kIsFloat<To>)
      return floatToFloat<To>(value);
    else
      return floatToInt<To>(double(load(value)));
  } else {
    if constexpr (kIsFloat<To>)
      return intToFloat<To>(int64_t(value));
    else
      return wrapTo<To>(uint64_t(int64_t(value))); // two's complement
  }
}

} // namespace

Status cast(const TensorView &input, const TensorView &out) {
  const char *name = "cast";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  const int64_t count = input.numel();
  if (count == 0)
    return Status::success();
  if (input.dtype == out.dtype) {
    if (input.data != out.data)
      std::memcpy(out.data, input.data, input.bytes());
    return Status::success();
  }
  dispatchAll(input.dtype, [&](auto fromTag) {
    using From = decltype(fromTag);
    dispatchAll(out.dtype, [&](auto toTag) {
      using To = decltype(toTag);
      const From *in = input.as<const From>();
      To *result = out.as<To>();
      parallelFor(count, 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          result[i] = convert<To>(in[i]);
      });
    });
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
