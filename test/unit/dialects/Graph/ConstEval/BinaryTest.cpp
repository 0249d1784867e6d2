//===- BinaryTest.cpp - Broadcasting binary ops ---------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(BinaryTest, BroadcastsTrailingDims) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i32({2, 3}, {1, 2, 3, 4, 5, 6}),
                            i32({3}, {10, 20, 30})),
                     T::I32, {2, 3}, {11, 22, 33, 14, 25, 36}));
}

TEST(BinaryTest, BroadcastsScalars) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Mul, i64({}, {3}), i64({2, 2}, {1, 2, 3, 4})),
                     T::I64, {2, 2}, {3, 6, 9, 12}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Sub, i64({}, {3}), i64({}, {5})), T::I64, {}, {-2}));
}

TEST(BinaryTest, BroadcastsBothWays) {
  // [2,1] x [1,3]: an outer product.
  EXPECT_TRUE(isInts(binary(BinaryOp::Mul, i32({2, 1}, {1, 2}), i32({1, 3}, {1, 10, 100})),
                     T::I32, {2, 3}, {1, 10, 100, 2, 20, 200}));
  // [2,1,2] + [3,1] -> [2,3,2]: a missing leading dim and size-1 dims on both sides.
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i32({2, 1, 2}, {1, 2, 3, 4}),
                            i32({3, 1}, {10, 20, 30})),
                     T::I32, {2, 3, 2},
                     {11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34}));
}

TEST(BinaryTest, BroadcastsZeroSizedDims) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i32({0, 3}, {}), i32({3}, {1, 2, 3})),
                     T::I32, {0, 3}, {}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i32({0}, {}), i32({1}, {1})), T::I32, {0}, {}));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, i32({0}, {}), i32({2}, {1, 2})),
                        "not broadcast-compatible"));
}

TEST(BinaryTest, RejectsIncompatibleShapes) {
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, i32({2, 3}, {1, 2, 3, 4, 5, 6}),
                               i32({2}, {1, 2})),
                        "shapes [2,3] and [2] are not broadcast-compatible"));
}

TEST(BinaryTest, RejectsMismatchedTypes) {
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, i32({1}, {1}), i64({1}, {1})),
                        "add needs integer or float operands of the same element "
                        "type but got i32 and i64"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Add, bools({1}, {1}), bools({1}, {1})),
                        "but got bool and bool"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Less, i32({1}, {1}), f32({1}, {1})),
                        "less needs operands of the same element type"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::And, i32({1}, {1}), i32({1}, {1})),
                        "and needs bool operands"));
}

TEST(BinaryTest, I32ArithmeticWraps) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i32({2}, {kI32Max, kI32Min}), i32({2}, {1, -1})),
                     T::I32, {2}, {kI32Min, kI32Max}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Mul, i32({2}, {65536, 3}), i32({2}, {65536, kI32Max})),
                     T::I32, {2}, {0, 2147483645}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Sub, i32({1}, {kI32Min}), i32({1}, {1})),
                     T::I32, {1}, {kI32Max}));
}

TEST(BinaryTest, OtherIntegerWidthsWrap) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, ints(T::U8, {2}, {250, 3}), ints(T::U8, {2}, {10, 5})),
                     T::U8, {2}, {4, 8}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Sub, ints(T::U8, {1}, {3}), ints(T::U8, {1}, {5})),
                     T::U8, {1}, {254}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, ints(T::I8, {1}, {127}), ints(T::I8, {1}, {1})),
                     T::I8, {1}, {-128}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Mul, ints(T::I16, {1}, {300}), ints(T::I16, {1}, {300})),
                     T::I16, {1}, {90000 - 65536}));
  // No signed-overflow UB at 64 bits either (checked by the sanitizer build).
  EXPECT_TRUE(isInts(binary(BinaryOp::Add, i64({2}, {kI64Max, kI64Min}), i64({2}, {1, -1})),
                     T::I64, {2}, {kI64Min, kI64Max}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Mul, i64({1}, {kI64Min}), i64({1}, {-1})),
                     T::I64, {1}, {kI64Min}));
}

TEST(BinaryTest, IntegerDivisionTruncatesTowardZero) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})),
                     T::I32, {4}, {3, -3, -3, 3}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, i64({2}, {-1, 1}), i64({}, {3})),
                     T::I64, {2}, {0, 0}));
  // The one quotient that overflows wraps instead of trapping.
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, i32({1}, {kI32Min}), i32({1}, {-1})),
                     T::I32, {1}, {kI32Min}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, i64({1}, {kI64Min}), i64({1}, {-1})),
                     T::I64, {1}, {kI64Min}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, ints(T::U8, {1}, {200}), ints(T::U8, {1}, {3})),
                     T::U8, {1}, {66}));
}

TEST(BinaryTest, IntegerDivisionByZeroFails) {
  EXPECT_TRUE(failsWith(binary(BinaryOp::Div, i32({2}, {1, 2}), i32({2}, {1, 0})),
                        "integer division by zero"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Div, i64({2}, {1, 2}), i64({}, {0})),
                        "integer division by zero"));
  // A zero divisor that is never used (empty result) is fine.
  EXPECT_TRUE(isInts(binary(BinaryOp::Div, i32({0}, {}), i32({1}, {0})), T::I32, {0}, {}));
}

TEST(BinaryTest, FloatDivisionByZeroIsIEEE) {
  EXPECT_TRUE(isFloats(binary(BinaryOp::Div, f32({3}, {1, -1, 0}), f32({3}, {0, 0, 0})),
                       T::F32, {3}, {kInf, -kInf, kNaN}));
}

TEST(BinaryTest, FloatResultsAreRoundedToTheType) {
  EXPECT_TRUE(isFloats(binary(BinaryOp::Add, f32({1}, {0.1}), f32({1}, {0.2})),
                       T::F32, {1}, {double(0.1f + 0.2f)}));
  // f16 has 11 significand bits: 2049 is a tie and goes to even 2048.
  EXPECT_TRUE(isFloats(binary(BinaryOp::Add, floats(T::F16, {3}, {2048, 2048, 65504}),
                              floats(T::F16, {3}, {1, 3, 16})),
                       T::F16, {3}, {2048, 2052, kInf}));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Add, floats(T::BF16, {2}, {256, 1}),
                              floats(T::BF16, {2}, {1, 0.001})),
                       T::BF16, {2}, {256, 1}));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Mul, f64({1}, {0.1}), f64({1}, {3})),
                       T::F64, {1}, {0.1 * 3}));
}

TEST(BinaryTest, IntegerPow) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Pow, i32({5}, {2, -3, 2, 0, 7}), i32({5}, {10, 3, 31, 0, 1})),
                     T::I32, {5}, {1024, -27, kI32Min, 1, 7}));
  // Negative exponents: 1 / base^n truncated toward zero.
  EXPECT_TRUE(isInts(binary(BinaryOp::Pow, i64({4}, {2, 1, -1, -1}), i64({4}, {-1, -5, -3, -2})),
                     T::I64, {4}, {0, 1, -1, 1}));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Pow, i32({1}, {0}), i32({1}, {-1})),
                        "0 to a negative exponent"));
  // Mixed integer types: the result has the base type.
  EXPECT_TRUE(isInts(binary(BinaryOp::Pow, ints(T::U8, {1}, {2}), i64({1}, {9})),
                     T::U8, {1}, {0}));
}

TEST(BinaryTest, FloatPowWithIntegerOrFloatExponent) {
  EXPECT_TRUE(isFloats(binary(BinaryOp::Pow, f32({3}, {2, 4, -2}), i64({3}, {3, -1, 3})),
                       T::F32, {3}, {8, 0.25, -8}));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Pow, f32({2}, {4, -8}), f32({2}, {0.5, 1.0 / 3})),
                       T::F32, {2}, {2, kNaN}));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Pow, f32({1}, {3}), f64({1}, {0.5})),
                       T::F32, {1}, {double(std::sqrt(3.0f))}, kF32Tolerance));
}

TEST(BinaryTest, IntegerPowWithFloatExponent) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Pow, i32({3}, {4, 2, 10}), f32({3}, {0.5, -1, 2.5})),
                     T::I32, {3}, {2, 0, 316}));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Pow, i32({1}, {10}), f32({1}, {10})),
                        "out of range for i32"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Pow, i32({1}, {-4}), f32({1}, {0.5})),
                        "NaN"));
  EXPECT_TRUE(failsWith(binary(BinaryOp::Pow, bools({1}, {1}), i32({1}, {1})),
                        "pow needs integer or float operands"));
}

TEST(BinaryTest, MaxMin) {
  EXPECT_TRUE(isInts(binary(BinaryOp::Max, i32({2, 2}, {1, 5, -3, 8}), i32({2}, {2, 6})),
                     T::I32, {2, 2}, {2, 6, 2, 8}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Min, i32({2, 2}, {1, 5, -3, 8}), i32({2}, {2, 6})),
                     T::I32, {2, 2}, {1, 5, -3, 6}));
  // NaN propagates from either side (numpy.maximum).
  EXPECT_TRUE(isFloats(binary(BinaryOp::Max, f32({3}, {kNaN, 1, 2}), f32({3}, {1, kNaN, 1})),
                       T::F32, {3}, {kNaN, kNaN, 2}));
  EXPECT_TRUE(isFloats(binary(BinaryOp::Min, f32({3}, {kNaN, 1, 2}), f32({3}, {1, kNaN, 1})),
                       T::F32, {3}, {kNaN, kNaN, 1}));
}

TEST(BinaryTest, Logical) {
  HostTensor a = bools({4}, {0, 0, 1, 1}), b = bools({4}, {0, 1, 0, 1});
  EXPECT_TRUE(isInts(binary(BinaryOp::And, a, b), T::Bool, {4}, {0, 0, 0, 1}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Or, a, b), T::Bool, {4}, {0, 1, 1, 1}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Xor, a, b), T::Bool, {4}, {0, 1, 1, 0}));
  EXPECT_TRUE(isInts(binary(BinaryOp::And, bools({2, 1}, {0, 1}), bools({2}, {1, 1})),
                     T::Bool, {2, 2}, {0, 0, 1, 1}));
}

TEST(BinaryTest, ComparisonsGiveBool) {
  HostTensor a = i64({3}, {1, 2, 3}), b = i64({}, {2});
  EXPECT_TRUE(isInts(binary(BinaryOp::Equal, a, b), T::Bool, {3}, {0, 1, 0}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Less, a, b), T::Bool, {3}, {1, 0, 0}));
  EXPECT_TRUE(isInts(binary(BinaryOp::LessEqual, a, b), T::Bool, {3}, {1, 1, 0}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Greater, a, b), T::Bool, {3}, {0, 0, 1}));
  EXPECT_TRUE(isInts(binary(BinaryOp::GreaterEqual, a, b), T::Bool, {3}, {0, 1, 1}));
  EXPECT_TRUE(isInts(binary(BinaryOp::Equal, bools({2}, {0, 1}), bools({2}, {1, 1})),
                     T::Bool, {2}, {0, 1}));
  // Unsigned values compare as unsigned.
  EXPECT_TRUE(isInts(binary(BinaryOp::Greater, ints(T::U8, {1}, {200}), ints(T::U8, {1}, {100})),
                     T::Bool, {1}, {1}));
  // Every comparison with NaN is false.
  HostTensor nan = f32({1}, {kNaN});
  for (BinaryOp op : {BinaryOp::Equal, BinaryOp::Less, BinaryOp::LessEqual,
                      BinaryOp::Greater, BinaryOp::GreaterEqual})
    EXPECT_TRUE(isInts(binary(op, nan, nan), T::Bool, {1}, {0})) << binaryOpName(op);
}

} // namespace
} // namespace shardc::constfold::test
