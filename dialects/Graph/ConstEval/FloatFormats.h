//===- FloatFormats.h - Rounding to f16 / bf16 / f32 ------------*- C++ -*-===//
//
// HostTensor keeps float elements as doubles that are already rounded to their
// type, so each op computes in double and rounds once at the end. These are the
// roundings (IEEE round-to-nearest-even, overflow to infinity, gradual
// underflow) plus the bit encodings a folder needs to build an attribute.
// The f16 and bf16 ones are the runtime's (runtime/core/HalfFloat.h, plain
// C++), so the compiler and the kernels round alike.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_FLOATFORMATS_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_FLOATFORMATS_H

#include <cstdint>

namespace shardc::constfold {

/// Nearest IEEE binary16 value (max 65504; 65520 and above become inf).
double roundToF16(double value);
/// Nearest bfloat16 value (8-bit exponent like f32, 7 stored mantissa bits).
double roundToBF16(double value);
/// Nearest binary32 value, without the undefined behaviour a plain cast has
/// on doubles beyond float's range.
double roundToF32(double value);

/// Bit patterns of the rounded value. NaN encodes as the canonical quiet NaN
/// (0x7e00 / 0x7fc0), keeping only the sign.
uint16_t f16Bits(double value);
uint16_t bf16Bits(double value);
/// Value of a bit pattern (exact in a double).
double f16FromBits(uint16_t bits);
double bf16FromBits(uint16_t bits);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_FLOATFORMATS_H
