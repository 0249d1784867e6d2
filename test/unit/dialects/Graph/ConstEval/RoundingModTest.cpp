//===- RoundingModTest.cpp - Round, Sign, Mod, IsNaN, IsInf ---------------===//

#include "TestUtil.h"

#include <cmath>
#include <limits>

namespace shardc::constfold::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(RoundTest, HalvesGoToEven) {
  HostTensor x = f32({9}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6, 7.0});
  EXPECT_TRUE(isFloats(unary(UnaryOp::Round, x), T::F32, {9}, {-2, -2, -0.0, 0, 2, 2, 2, -3, 7}));
  // -0.5 rounds to -0, not +0.
  auto negativeHalf = unary(UnaryOp::Round, f64({1}, {-0.5}));
  ASSERT_TRUE(negativeHalf);
  EXPECT_TRUE(std::signbit(negativeHalf->floats[0]));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Round, f64({3}, {kNaN, kInf, -kInf})), T::F64, {3},
                       {kNaN, kInf, -kInf}));
  // f16 holds 1000.5 exactly (its spacing there is 0.5): a tie, to the even 1000.
  EXPECT_TRUE(isFloats(unary(UnaryOp::Round, floats(T::F16, {1}, {1000.5})), T::F16, {1},
                       {1000}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Round, i32({2}, {-3, 4})), T::I32, {2}, {-3, 4}));
}

TEST(SignTest, FloatsKeepNaNAndIntegersGiveUnits) {
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sign, f32({6}, {-3.5, -0.0, 0, 1e-30, kInf, kNaN})),
                       T::F32, {6}, {-1, 0, 0, 1, 1, kNaN}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Sign, i64({4}, {-7, 0, 9, std::numeric_limits<int64_t>::min()})),
                     T::I64, {4}, {-1, 0, 1, -1}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Sign, ints(T::U8, {2}, {0, 200})), T::U8, {2}, {0, 1}));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Sign, bools({1}, {1})), "but got bool"));
}

TEST(ModTest, IntegersFloorOrTruncate) {
  HostTensor a = i32({6}, {-4, 7, 5, 4, -7, 8});
  HostTensor b = i32({6}, {2, -3, 8, -2, 3, 5});
  // Python's %: the divisor's sign.
  EXPECT_TRUE(isInts(binary(BinaryOp::Mod, a, b), T::I32, {6}, {0, -2, 5, 0, 2, 3}));
  // C's %: the dividend's sign.
  EXPECT_TRUE(isInts(binary(BinaryOp::FMod, a, b), T::I32, {6}, {0, 1, 5, 0, -1, 3}));
  // Broadcasting, and INT_MIN % -1 (overflow in C) is 0.
  const int64_t min64 = std::numeric_limits<int64_t>::min();
  EXPECT_TRUE(isInts(binary(BinaryOp::Mod, i64({3}, {min64, -5, 5}), i64({}, {-1})), T::I64, {3},
                     {0, 0, 0}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Mod, i64({2, 2}, {-1, -2, 3, 4}), i64({2}, {3, -3})),
                     T::I64, {2, 2}, {2, -2, 0, -2}));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Mod, a, i32({1}, {0})), "integer division by zero"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::FMod, a, i32({1}, {0})), "integer division by zero"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Mod, a, i64({1}, {3})), "mod needs integer or float"));
}

TEST(ModTest, FloatsFollowOnnxMod28) {
  HostTensor a = f64({6}, {-4.3, 7.2, 5.0, 4.3, -7.2, 8.0});
  HostTensor b = f64({6}, {2.1, -3.4, 8.0, -2.1, 3.4, 5.0});
  EXPECT_TRUE(isFloats(binary(BinaryOp::FMod, a, b), T::F64, {6}, {-0.1, 0.4, 5, 0.1, -0.4, 3},
                       1e-12));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Mod, a, b), T::F64, {6}, {2.0, -3.0, 5, -2.0, 3.0, 3},
                       1e-12));
  // Mod-28's special cases: zeros take the divisor's sign; x % inf is x with
  // inf's sign, the infinity otherwise; inf % y and x % 0 are NaN.
  HostTensor x = f32({10}, {0.0, -0.0, -3, 3, -1, 1, kInf, 1, kNaN, 1});
  HostTensor y = f32({10}, {-2, 2, kInf, kInf, -kInf, -kInf, 2, 0, 2, kNaN});
  auto floored = binary(BinaryOp::Mod, x, y);
  EXPECT_TRUE(isFloats(floored, T::F32, {10}, {0, 0, kInf, 3, -1, -kInf, kNaN, kNaN, kNaN, kNaN}));
  ASSERT_TRUE(floored);
  EXPECT_TRUE(std::signbit(floored->floats[0]));
  EXPECT_FALSE(std::signbit(floored->floats[1]));
  EXPECT_TRUE(isFloats(binary(BinaryOp::FMod, x, y), T::F32, {10},
                       {0, -0.0, -3, 3, -1, 1, kNaN, kNaN, kNaN, kNaN}));
}

TEST(ClassifyTest, IsNaNAndIsInf) {
  HostTensor x = f32({5}, {1, kNaN, kInf, -kInf, -0.0});
  EXPECT_TRUE(isInts(isNaN(x), T::Bool, {5}, {0, 1, 0, 0, 0}));
  EXPECT_TRUE(isInts(isInf(x, true, true), T::Bool, {5}, {0, 0, 1, 1, 0}));
  EXPECT_TRUE(isInts(isInf(x, true, false), T::Bool, {5}, {0, 0, 1, 0, 0}));
  EXPECT_TRUE(isInts(isInf(x, false, true), T::Bool, {5}, {0, 0, 0, 1, 0}));
  EXPECT_TRUE(isInts(isInf(x, false, false), T::Bool, {5}, {0, 0, 0, 0, 0}));
  // 1e5 overflows f16 to inf when the constant is made.
  EXPECT_TRUE(isInts(isInf(floats(T::F16, {2}, {1e5, 6e4}), true, true), T::Bool, {2}, {1, 0}));
  EXPECT_TRUE(failsWith(isNaN(i32({1}, {1})), "is_nan needs a float operand but got i32"));
  EXPECT_TRUE(failsWith(isInf(bools({1}, {1}), true, true), "is_inf needs a float operand"));
}

} // namespace
} // namespace shardc::constfold::test
