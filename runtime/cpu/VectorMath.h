//===- VectorMath.h - exp, sigmoid and erfc the compiler vectorizes -*- C++ -*-===//
//
// libm's expf/erfcf are calls the compiler cannot vectorize, and they set the
// pace of every elementwise kernel built on them: measured on GPT-2-small's
// MLP (128 x 3072 elements, one thread), the erf-GELU through erfcf took 1.4
// ms, as long as the layer's GEMM beside it. These are straight-line float
// arithmetic with selects instead of branches, so a loop over them becomes
// vector code. The double overloads (the compute type of fp64 kernels) are
// libm's, so a kernel templated on its compute type calls vmath:: for both.
//
// Accuracy (relative, measured by test/unit/runtime/cpu/VectorMathTest.cpp
// against libm in double): exp and sigmoid within 2 and 3 ulp; erfc within
// 1e-6 for |z| < 2.8, 2e-6 up to 4 and 1e-5 up to 8.5, where the rounding of
// z * z in the exponent dominates (erfc is below 1e-8 and 1e-32 there; libm's
// erfcf is within 1 ulp, which no model's numerics can tell apart).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_VECTORMATH_H
#define SHARDC_RUNTIME_CPU_VECTORMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace shardc::rt::cpu::vmath {

/// e^x: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two so that r is
/// exact), e^r by its Taylor series to degree 7 (truncation error < 1e-8,
/// below fp32's rounding), times 2^n built in the exponent bits, in two
/// halves so that results down to the subnormals (n = -149) are kept as libm
/// keeps them, and up to 2^128 (n = 128 is 2^64 * 2^64). Above the largest
/// float gives inf, below the subnormals 0; NaN stays NaN.
inline float exp(float x) {
  // A finite argument in [-104, ln(FLT_MAX)] for the arithmetic (NaN takes
  // -104 here, so the float -> int conversion below is always defined), fixed
  // up at the end.
  const float maxArgument = 88.7228391f;
  const float t = x > maxArgument ? maxArgument : x >= -104.0f ? x : -104.0f;
  // Round to nearest by adding and removing 1.5 * 2^23 (exact for |t| < 2^22):
  // unlike nearbyint this needs no SSE4.1 and vectorizes on baseline x86-64.
  const float magic = 12582912.0f;
  const float n = (t * 1.44269504088896341f + magic) - magic; // in [-150, 128]
  const float r = (t - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n = 2^half * 2^(n - half), each factor a normal float.
  const int32_t whole = int32_t(n), half = whole / 2;
  const int32_t highBits = (half + 127) << 23, lowBits = (whole - half + 127) << 23;
  float high, low;
  std::memcpy(&high, &highBits, sizeof high);
  std::memcpy(&low, &lowBits, sizeof low);
  const float result = p * high * low;
  const float inf = std::numeric_limits<float>::infinity();
  return x > maxArgument ? inf : x >= -104.0f ? result : x != x ? x : 0.0f;
}

/// 1 / (1 + e^-x) from e = e^-|x| <= 1, so nothing overflows for any x.
inline float sigmoid(float x) {
  const float e = exp(x < 0 ? x : -x);
  const float denominator = 1.0f + e;
  return x >= 0 ? 1.0f / denominator : e / denominator;
}

/// erfc(z) = 1 - erf(z) by a Chebyshev-fitted form t e^(-z^2 + P(t)) with
/// t = 1 / (1 + |z| / 2) (fractional error of the fit < 1.2e-7 for every z),
/// and erfc(-z) = 2 - erfc(z). Computing erfc, not 1 - erf, keeps the
/// relative precision of small results (gelu's left tail needs it).
inline float erfc(float z) {
  const float a = z < 0 ? -z : z;
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float tail = t * exp(p - a * a);
  return z >= 0 ? tail : 2.0f - tail;
}

inline double exp(double x) { return std::exp(x); }
inline double erfc(double x) { return std::erfc(x); }
/// The same two forms as the float sigmoid, so nothing overflows.
inline double sigmoid(double x) {
  const double e = std::exp(x < 0 ? x : -x);
  return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

} // namespace shardc::rt::cpu::vmath

#endif // SHARDC_RUNTIME_CPU_VECTORMATH_H
