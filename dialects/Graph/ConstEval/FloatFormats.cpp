//===- FloatFormats.cpp - Round-to-nearest-even for narrow floats ---------===//

#include "dialects/Graph/ConstEval/FloatFormats.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace shardc::constfold {
namespace {

struct BinaryFormat {
  int mantissaBits;   // stored fraction bits
  int minNormalExp;   // exponent of the smallest normal number
  int maxExp;         // exponent of the largest finite number
};

constexpr BinaryFormat kF16{10, -14, 15};
constexpr BinaryFormat kBF16{7, -126, 127};
constexpr BinaryFormat kF32{23, -126, 127};

// Rounds arithmetically instead of by bit twiddling: within one binade the
// representable numbers are the integer multiples of a power-of-two quantum,
// so scaling by it, rounding to an integer (ties to even) and scaling back is
// exact in double for every format narrower than double. Subnormals share the
// quantum of the smallest normal binade, which gives gradual underflow for free.
double roundToFormat(double value, const BinaryFormat &format) {
  if (!std::isfinite(value) || value == 0)
    return value;
  double magnitude = std::fabs(value);
  int exponent = std::max(std::ilogb(magnitude), format.minNormalExp);
  double quantum = std::ldexp(1.0, exponent - format.mantissaBits);
  double scaled = magnitude / quantum; // exact: division by a power of two
  double whole = std::floor(scaled);
  double fraction = scaled - whole;
  // whole < 2^(mantissaBits + 1), so the integer conversion is exact.
  if (fraction > 0.5 || (fraction == 0.5 && (int64_t(whole) & 1)))
    whole += 1;
  double rounded = whole * quantum;
  double maxFinite =
      std::ldexp(2.0 - std::ldexp(1.0, -format.mantissaBits), format.maxExp);
  if (rounded > maxFinite)
    rounded = std::numeric_limits<double>::infinity();
  return std::copysign(rounded, value);
}

} // namespace

double roundToF16(double value) { return roundToFormat(value, kF16); }
double roundToBF16(double value) { return roundToFormat(value, kBF16); }

double roundToF32(double value) {
  // The hardware conversion is correct and fast, but only defined in range.
  if (std::fabs(value) <= double(FLT_MAX))
    return double(static_cast<float>(value));
  return roundToFormat(value, kF32); // NaN, inf, or overflow handling
}

uint16_t f16Bits(double value) {
  double rounded = roundToF16(value);
  uint16_t sign = std::signbit(rounded) ? 0x8000 : 0;
  if (std::isnan(rounded))
    return sign | 0x7e00;
  if (std::isinf(rounded))
    return sign | 0x7c00;
  double magnitude = std::fabs(rounded);
  if (magnitude == 0)
    return sign;
  int exponent = std::ilogb(magnitude);
  if (exponent < kF16.minNormalExp) // subnormal: a multiple of 2^-24
    return sign | uint16_t(std::ldexp(magnitude, 24));
  auto fraction = uint16_t(std::ldexp(magnitude, 10 - exponent) - 1024);
  return sign | uint16_t((exponent + 15) << 10) | fraction;
}

double f16FromBits(uint16_t bits) {
  int biasedExp = (bits >> 10) & 0x1f;
  int fraction = bits & 0x3ff;
  double magnitude;
  if (biasedExp == 0x1f)
    magnitude = fraction ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (biasedExp == 0)
    magnitude = std::ldexp(double(fraction), -24);
  else
    magnitude = std::ldexp(double(1024 + fraction), biasedExp - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

uint16_t bf16Bits(double value) {
  double rounded = roundToBF16(value);
  if (std::isnan(rounded))
    return uint16_t((std::signbit(rounded) ? 0x8000 : 0) | 0x7fc0);
  // bf16 is the top half of an f32, and the rounded value is exact in f32.
  auto asFloat = static_cast<float>(rounded);
  uint32_t bits;
  std::memcpy(&bits, &asFloat, sizeof bits);
  return uint16_t(bits >> 16);
}

double bf16FromBits(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float asFloat;
  std::memcpy(&asFloat, &wide, sizeof asFloat);
  return double(asFloat);
}

} // namespace shardc::constfold
