//===- HalfFloatAgreementTest.cpp - compiler and runtime round alike ------===//
//
// The constant evaluator (weights converted by --dtype, folded constants)
// and the runtime's kernels must produce the same fp16/bf16 bits. Both go
// through runtime/core/HalfFloat.h; these tests pin that down on all 65536
// patterns of each format, and check the evaluator's double inputs, which
// are rounded once to odd in float first, against the exact answer at every
// midpoint between neighbouring values.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/ConstEval/FloatFormats.h"
#include "runtime/core/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

namespace {

namespace cf = shardc::constfold;
namespace rt = shardc::rt;

uint64_t bitsOfDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

/// One format as each side sees it.
struct Format {
  const char *name;
  std::function<double(uint16_t)> compilerDecode;
  std::function<float(uint16_t)> runtimeDecode;
  std::function<uint16_t(double)> compilerEncode;
  std::function<uint16_t(float)> runtimeEncode;
};

const Format kFormats[] = {
    {"f16", cf::f16FromBits, [](uint16_t b) { return rt::toFloat(rt::Half{b}); }, cf::f16Bits,
     [](float f) { return rt::toHalf(f).bits; }},
    {"bf16", cf::bf16FromBits, [](uint16_t b) { return rt::toFloat(rt::BFloat16{b}); },
     cf::bf16Bits, [](float f) { return rt::toBFloat16(f).bits; }},
};

TEST(HalfFloatAgreementTest, EveryPatternDecodesAndEncodesAlike) {
  for (const Format &format : kFormats)
    for (uint32_t pattern = 0; pattern < 0x10000; ++pattern) {
      const auto bits = uint16_t(pattern);
      const double compiler = format.compilerDecode(bits);
      const float runtime = format.runtimeDecode(bits);
      if (std::isnan(runtime)) {
        ASSERT_TRUE(std::isnan(compiler)) << format.name << " " << std::hex << pattern;
        ASSERT_EQ(format.compilerEncode(compiler), format.runtimeEncode(runtime))
            << format.name << " " << std::hex << pattern;
        continue;
      }
      ASSERT_EQ(bitsOfDouble(compiler), bitsOfDouble(double(runtime)))
          << format.name << " " << std::hex << pattern;
      ASSERT_EQ(format.compilerEncode(compiler), pattern)
          << format.name << " " << std::hex << pattern;
      ASSERT_EQ(format.runtimeEncode(runtime), pattern)
          << format.name << " " << std::hex << pattern;
    }
}

// Between two neighbouring finite values of the same sign: the exact
// midpoint goes to the one with the even pattern, anything above it up, below
// it down, including offsets far below float's precision (which a double ->
// float -> half conversion would lose).
TEST(HalfFloatAgreementTest, DoublesRoundOnceAtEveryMidpoint) {
  for (const Format &format : kFormats)
    for (uint32_t pattern = 0; pattern < 0x7fff; ++pattern) {
      const auto low = uint16_t(pattern), high = uint16_t(pattern + 1);
      const double a = format.compilerDecode(low), b = format.compilerDecode(high);
      if (!std::isfinite(a) || !std::isfinite(b))
        continue;
      const double middle = (a + b) / 2; // exact: both have few mantissa bits
      const double nudge = std::ldexp(b - a, -40);
      const uint16_t even = (low & 1) ? high : low;
      ASSERT_EQ(format.compilerEncode(middle), even) << format.name << " " << std::hex << pattern;
      ASSERT_EQ(format.compilerEncode(middle + nudge), high)
          << format.name << " " << std::hex << pattern;
      ASSERT_EQ(format.compilerEncode(middle - nudge), low)
          << format.name << " " << std::hex << pattern;
      ASSERT_EQ(format.compilerEncode(-(middle + nudge)), uint16_t(high | 0x8000))
          << format.name << " " << std::hex << pattern;
    }
}

} // namespace
