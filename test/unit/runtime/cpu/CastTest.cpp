//===- CastTest.cpp - cast and the f16/bf16 conversions -------------------===//
#include "TestUtil.h"

#include <limits>

namespace shardc::rt::cpu::test {
namespace {

const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                           DType::I32, DType::I16, DType::I8,   DType::U8,  DType::Bool};

TEST(CpuCastTest, EveryPairMatchesTheReferenceExactly) {
  ThreadScope threads(2);
  Rng rng(11);
  for (DType from : kAllTypes) {
    for (DType to : kAllTypes) {
      // Values every target holds after truncation (ConstEval refuses the
      // rest; their saturation is checked below), plus fractions and halves
      // that exercise rounding.
      HostTensor x = random(from, {5, 41}, rng, 0, 120);
      if (isFloat(from))
        for (int64_t i = 0; i < x.numel(); i += 7)
          setDouble(x, i, to == DType::U8 ? 0.5 : -0.75);
      CTensor want = expectOk(cf::cast(toConst(x), scalarType(to)));
      HostTensor out(to, x.shape);
      ASSERT_TRUE(succeeded(cast(x.view(), out.view())));
      EXPECT_TRUE(closeTo(out, want, 0)) << dtypeName(from) << " -> " << dtypeName(to);
    }
  }
}

TEST(CpuCastTest, RoundsWideValuesOnceToHalfPrecision) {
  // 1 + 2^-11 + 2^-30 is just above the f16 tie between 1 and 1 + 2^-10:
  // double -> float -> f16 would round to the tie and then to even (1); one
  // correct rounding gives 1 + 2^-10. Same for bf16 at 2^-8.
  HostTensor x = make(DType::F64, {2}, {1 + 0x1p-11 + 0x1p-30, 1 + 0x1p-8 + 0x1p-40});
  HostTensor h(DType::F16, {2}), b(DType::BF16, {2});
  ASSERT_TRUE(succeeded(cast(x.view(), h.view())));
  ASSERT_TRUE(succeeded(cast(x.view(), b.view())));
  EXPECT_EQ(getDouble(h, 0), 1 + 0x1p-10);
  EXPECT_EQ(getDouble(b, 1), 1 + 0x1p-7);
  // The same for integers above 2^24, where int -> float already rounds.
  HostTensor big(DType::I64, {3});
  setInt(big, 0, (int64_t(1) << 40) + (int64_t(1) << 32) + 1); // just above a bf16 tie
  setInt(big, 1, int64_t(1) << 62);
  setInt(big, 2, -((int64_t(1) << 40) + (int64_t(1) << 32) + 1));
  HostTensor bb(DType::BF16, {3});
  ASSERT_TRUE(succeeded(cast(big.view(), bb.view())));
  EXPECT_TRUE(closeTo(bb, expectOk(cf::cast(toConst(big), cf::ScalarType::BF16)), 0));
  EXPECT_EQ(getDouble(bb, 0), 0x1p40 + 0x1p33);
}

TEST(CpuCastTest, FloatToIntTruncatesAndSaturates) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = make(DType::F32, {8}, {2.9, -2.9, 1e10, -1e10, inf, -inf, nan, -0.5});
  HostTensor i8(DType::I8, {8}), i32(DType::I32, {8}), u8(DType::U8, {8}), i64(DType::I64, {8});
  ASSERT_TRUE(succeeded(cast(x.view(), i8.view())));
  EXPECT_TRUE(closeTo(i8, {8}, {2, -2, 127, -128, 127, -128, 0, 0}, 0));
  ASSERT_TRUE(succeeded(cast(x.view(), i32.view())));
  EXPECT_TRUE(closeTo(i32, {8}, {2, -2, 2147483647, -2147483648.0, 2147483647, -2147483648.0,
                                 0, 0}, 0));
  ASSERT_TRUE(succeeded(cast(x.view(), u8.view())));
  EXPECT_TRUE(closeTo(u8, {8}, {2, 0, 255, 0, 255, 0, 0, 0}, 0));
  ASSERT_TRUE(succeeded(cast(x.view(), i64.view())));
  EXPECT_EQ(getInt(i64, 4), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(getInt(i64, 5), std::numeric_limits<int64_t>::min());
}

TEST(CpuCastTest, BoolAndWrapping) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = make(DType::F32, {4}, {0, -0.0, nan, 0.25});
  HostTensor b(DType::Bool, {4});
  ASSERT_TRUE(succeeded(cast(x.view(), b.view())));
  EXPECT_TRUE(closeTo(b, {4}, {0, 0, 1, 1}, 0));
  HostTensor wide(DType::I32, {3});
  setInt(wide, 0, 300);
  setInt(wide, 1, -1);
  setInt(wide, 2, 128);
  HostTensor u8(DType::U8, {3}), i8(DType::I8, {3});
  ASSERT_TRUE(succeeded(cast(wide.view(), u8.view())));
  EXPECT_TRUE(closeTo(u8, {3}, {44, 255, 128}, 0));
  ASSERT_TRUE(succeeded(cast(wide.view(), i8.view())));
  EXPECT_TRUE(closeTo(i8, {3}, {44, -1, -128}, 0));
}

TEST(CpuCastTest, InPlaceBetweenTypesOfOneSize) {
  HostTensor x = make(DType::I32, {3}, {1, -2, 3});
  TensorView asFloat{x.bytes.data(), DType::F32, {3}};
  ASSERT_TRUE(succeeded(cast(x.view(), asFloat)));
  const float *f = static_cast<const float *>(asFloat.data);
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -2.0f);
  EXPECT_EQ(f[2], 3.0f);
}

TEST(CpuCastTest, RejectsShapeChanges) {
  HostTensor x(DType::F32, {2, 3}), y(DType::F16, {6});
  EXPECT_TRUE(failsWith(cast(x.view(), y.view()), "cast: result shape differs"));
}

TEST(CpuHalfFloatTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const Half h{uint16_t(bits)};
    const float f = toFloat(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(toFloat(toHalf(f))));
      continue;
    }
    ASSERT_EQ(toHalf(f).bits, bits) << std::hex << bits;
    EXPECT_EQ(double(f), cf::f16FromBits(uint16_t(bits))) << std::hex << bits;
    const BFloat16 b{uint16_t(bits)};
    const float g = toFloat(b);
    if (!std::isnan(g)) {
      ASSERT_EQ(toBFloat16(g).bits, bits) << std::hex << bits;
      EXPECT_EQ(double(g), cf::bf16FromBits(uint16_t(bits))) << std::hex << bits;
    }
  }
}

TEST(CpuHalfFloatTest, RoundsLikeTheReference) {
  Rng rng(12);
  // Random bit patterns cover every exponent: subnormals, overflow, ties.
  std::uniform_int_distribution<uint32_t> dist;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = dist(rng);
    if (i % 4 == 0) // bias toward f16's range, where the cases are
      bits = (bits & 0x807fffffu) | ((100u + bits % 45u) << 23);
    if (i % 8 == 1) // exact ties between two f16 or bf16 values
      bits &= i % 16 == 1 ? 0xffffe000u | 0x1000u : 0xffff8000u;
    float f;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(toHalf(f).bits, cf::f16Bits(f)) << f;
    ASSERT_EQ(toBFloat16(f).bits, cf::bf16Bits(f)) << f;
  }
}

TEST(CpuHalfFloatTest, NaNStaysNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(toFloat(toHalf(nan))));
  EXPECT_TRUE(std::isnan(toFloat(toBFloat16(-nan))));
  EXPECT_EQ(toHalf(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(toHalf(65519.0f).bits, 0x7bff);
  EXPECT_EQ(toHalf(65520.0f).bits, 0x7c00);
}

} // namespace
} // namespace shardc::rt::cpu::test
