//===- HalfFloat.h - float16 / bfloat16 storage conversions -----*- C++ -*-===//
//
// The project's one fp16/bf16 conversion, MLIR-free: the runtime's kernels
// and collectives store F16 and BF16 tensors as 16-bit patterns and compute
// in fp32 (load with toFloat, store with toHalf/toBFloat16), and the
// compiler's constant evaluator rounds folded values and converts weights
// (--dtype) through the same functions, so both sides agree bit for bit
// (test/unit/ConstEval/HalfFloatAgreementTest.cpp). The conversions are written out in integer
// arithmetic (no F16C or AVX512-BF16 instructions), so the library runs on any x86-64 or ARM CPU,
// and inline, because they sit in the innermost loops.
//
// Rounding is IEEE round-to-nearest-even with overflow to infinity and
// gradual underflow (f16 subnormals), the same as a hardware conversion; NaN
// becomes a quiet NaN of the same sign.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_HALFFLOAT_H
#define SHARDC_RUNTIME_CORE_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace shardc::rt {

/// Storage types for F16 and BF16 elements: the raw bits, so that templates
/// over element types cannot mistake them for integers.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

namespace half_detail {
inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
} // namespace half_detail

inline float toFloat(Half h) {
  using namespace half_detail;
  const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
  const uint32_t exponent = (h.bits >> 10) & 0x1fu;
  const uint32_t mantissa = h.bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = float(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) // inf or NaN; the payload keeps NaN a NaN
    return floatOf(sign | 0x7f800000u | (mantissa << 13));
  // Rebias the exponent from 15 to 127.
  return floatOf(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline Half toHalf(float value) {
  using namespace half_detail;
  const uint32_t bits = bitsOf(value);
  const auto sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) // inf stays inf; NaN becomes the quiet NaN
    return {uint16_t(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u))};
  if (magnitude >= 0x477ff000u) // >= 65520 rounds past 65504, the largest f16
    return {uint16_t(sign | 0x7c00u)};
  if (magnitude < 0x38800000u) {
    // Below 2^-14 the result is a subnormal (or zero) in units of 2^-24. The
    // scaling by 2^24 is exact, and nearbyint rounds to even in the default
    // rounding mode; 1024 units comes out as the smallest normal, correctly.
    float units = std::nearbyint(floatOf(magnitude) * 0x1p24f);
    return {uint16_t(sign | uint16_t(units))};
  }
  // Normal: drop 13 mantissa bits rounding to nearest even (a carry out of the
  // mantissa correctly bumps the exponent), then rebias 127 -> 15.
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return {uint16_t(sign | ((rounded - (112u << 23)) >> 13))};
}

inline float toFloat(BFloat16 b) { return half_detail::floatOf(uint32_t(b.bits) << 16); }

inline BFloat16 toBFloat16(float value) {
  using namespace half_detail;
  const uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep the sign, make it quiet
    return {uint16_t(((bits >> 16) & 0x8000u) | 0x7fc0u)};
  // bfloat16 is the top half of a float: round the low half to nearest even.
  // Overflow carries into the exponent and gives inf, as it should.
  return {uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16)};
}

/// float rounded to odd: truncated toward zero, with the last mantissa bit set
/// when that was inexact. Rounding this once more to a format with at least
/// two fewer mantissa bits (f16, bf16) gives the correctly rounded result of
/// the original double, which double -> float -> f16 would not (it rounds
/// twice). Used by cast from F64 and from 64-bit integers, and by the constant
/// evaluator, which computes in double.
inline float toFloatRoundToOdd(double value) {
  using namespace half_detail;
  float nearest = float(value);
  if (std::isnan(value) || double(nearest) == value)
    return nearest; // exact (or NaN): nothing to mark
  if (std::isinf(nearest)) {
    // Beyond float's range the f16/bf16 result is inf anyway; a finite float
    // that still overflows later keeps that.
    return nearest;
  }
  // Step back toward zero if rounding went away from it, then mark inexact.
  if (std::fabs(double(nearest)) > std::fabs(value))
    nearest = std::nextafter(nearest, 0.0f);
  return floatOf(bitsOf(nearest) | 1u);
}

} // namespace shardc::rt

#endif // SHARDC_RUNTIME_CORE_HALFFLOAT_H
