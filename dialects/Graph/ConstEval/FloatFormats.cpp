//===- FloatFormats.cpp - Round-to-nearest-even for narrow floats ---------===//
//
// f16 and bf16 go through the runtime's conversions (runtime/core/HalfFloat.h),
// so folded constants and converted weights hold the bits the kernels make.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/ConstEval/FloatFormats.h"

#include "runtime/core/HalfFloat.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace shardc::constfold {
namespace {

/// The double rounded once to float, to odd (rt::toFloatRoundToOdd): the
/// shared fp16/bf16 conversions then round it correctly, as if from the
/// double itself.
float narrowed(double value) { return rt::toFloatRoundToOdd(value); }

} // namespace

uint16_t f16Bits(double value) { return rt::toHalf(narrowed(value)).bits; }
uint16_t bf16Bits(double value) { return rt::toBFloat16(narrowed(value)).bits; }
double f16FromBits(uint16_t bits) { return double(rt::toFloat(rt::Half{bits})); }
double bf16FromBits(uint16_t bits) { return double(rt::toFloat(rt::BFloat16{bits})); }

double roundToF16(double value) {
  // NaN stays the value itself (its payload), as folding never encodes it here.
  return std::isnan(value) ? value : f16FromBits(f16Bits(value));
}
double roundToBF16(double value) {
  return std::isnan(value) ? value : bf16FromBits(bf16Bits(value));
}

double roundToF32(double value) {
  // The hardware conversion is correct and fast, but only defined in range.
  if (!std::isfinite(value) || std::fabs(value) <= double(FLT_MAX))
    return double(static_cast<float>(value));
  // Beyond FLT_MAX: FLT_MAX up to the midpoint to the next binade's first
  // step (2^128 - 2^103), infinity from it on (ties go to the even, inf).
  const double overflow = 0x1p128 - 0x1p103;
  return std::copysign(std::fabs(value) < overflow ? double(FLT_MAX)
                                                   : std::numeric_limits<double>::infinity(),
                       value);
}

} // namespace shardc::constfold
