//===- CastTest.cpp - ONNX Cast -------------------------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(CastTest, FloatToIntTruncatesTowardZero) {
  EXPECT_TRUE(isInts(cast(f32({6}, {2.7, -2.7, 0.5, -0.5, 3, -0.0}), T::I32), T::I32, {6},
                     {2, -2, 0, 0, 3, 0}));
  EXPECT_TRUE(isInts(cast(f64({2}, {255.9, 0.9}), T::U8), T::U8, {2}, {255, 0}));
  EXPECT_TRUE(isInts(cast(f64({2}, {127.5, -128.5}), T::I8), T::I8, {2}, {127, -128}));
  EXPECT_TRUE(isInts(cast(f64({2}, {-0x1p63, 9.2233720368547748e18}), T::I64), T::I64, {2},
                     {std::numeric_limits<int64_t>::min(), 9223372036854774784}));
}

TEST(CastTest, FloatToIntFailsOnNaNInfAndOutOfRange) {
  EXPECT_TRUE(failsWith(cast(f32({1}, {kNaN}), T::I32), "cannot cast f32 value nan to i32"));
  EXPECT_TRUE(failsWith(cast(f32({1}, {kInf}), T::I64), "not finite or out of range"));
  EXPECT_TRUE(failsWith(cast(f32({1}, {3e9}), T::I32), "out of range"));
  EXPECT_TRUE(failsWith(cast(f32({1}, {256}), T::U8), "out of range"));
  EXPECT_TRUE(failsWith(cast(f32({1}, {-1}), T::U8), "out of range"));
  EXPECT_TRUE(failsWith(cast(f64({1}, {0x1p63}), T::I64), "out of range"));
}

TEST(CastTest, IntToIntWraps) {
  EXPECT_TRUE(isInts(cast(i64({3}, {300, -1, 1LL << 40}), T::U8), T::U8, {3}, {44, 255, 0}));
  EXPECT_TRUE(isInts(cast(i64({2}, {1LL << 31, (1LL << 32) + 5}), T::I32), T::I32, {2},
                     {std::numeric_limits<int32_t>::min(), 5}));
  EXPECT_TRUE(isInts(cast(ints(T::U8, {1}, {200}), T::I8), T::I8, {1}, {-56}));
  EXPECT_TRUE(isInts(cast(ints(T::I8, {1}, {-56}), T::I64), T::I64, {1}, {-56}));
}

TEST(CastTest, ToBoolIsNonZero) {
  EXPECT_TRUE(isInts(cast(f32({5}, {0, -0.0, 0.1, -3, kNaN}), T::Bool), T::Bool, {5},
                     {0, 0, 1, 1, 1}));
  EXPECT_TRUE(isInts(cast(i32({3}, {0, 7, -1}), T::Bool), T::Bool, {3}, {0, 1, 1}));
}

TEST(CastTest, FromBool) {
  HostTensor flags = bools({2}, {1, 0});
  EXPECT_TRUE(isInts(cast(flags, T::I64), T::I64, {2}, {1, 0}));
  EXPECT_TRUE(isFloats(cast(flags, T::BF16), T::BF16, {2}, {1, 0}));
}

TEST(CastTest, ToNarrowFloatsRoundsToNearestEven) {
  HostTensor x = f64({4}, {1.0 / 3, 0.1, 65519, 70000});
  EXPECT_TRUE(isFloats(cast(x, T::F16), T::F16, {4}, {0.333251953125, 0.0999755859375, 65504, kInf}));
  EXPECT_TRUE(isFloats(cast(x, T::BF16), T::BF16, {4}, {0.333984375, 0.10009765625, 65536, 70144}));
  EXPECT_TRUE(isFloats(cast(x, T::F32), T::F32, {4},
                       {double(1.0f / 3), double(0.1f), 65519, 70000}));
  // f32 -> f16 rounds the already-rounded f32 value once.
  EXPECT_TRUE(isFloats(cast(f32({1}, {1 + 0x1p-11}), T::F16), T::F16, {1}, {1}));
  // Widening is exact.
  EXPECT_TRUE(isFloats(cast(floats(T::F16, {1}, {0.1}), T::F64), T::F64, {1}, {0.0999755859375}));
  EXPECT_TRUE(isFloats(cast(f64({2}, {kNaN, -kInf}), T::BF16), T::BF16, {2}, {kNaN, -kInf}));
}

TEST(CastTest, IntToFloat) {
  EXPECT_TRUE(isFloats(cast(i64({3}, {16777217, -3, 65536}), T::F32), T::F32, {3},
                       {16777216, -3, 65536}));
  EXPECT_TRUE(isFloats(cast(i64({2}, {2049, 65536}), T::F16), T::F16, {2}, {2048, kInf}));
  EXPECT_TRUE(isFloats(cast(i64({1}, {257}), T::BF16), T::BF16, {1}, {256}));
}

TEST(CastTest, SameTypeIsIdentity) {
  EXPECT_TRUE(isInts(cast(i32({2}, {1, 2}), T::I32), T::I32, {2}, {1, 2}));
  EXPECT_TRUE(isFloats(cast(f32({}, {0.5}), T::F32), T::F32, {}, {0.5}));
}

} // namespace
} // namespace shardc::constfold::test
