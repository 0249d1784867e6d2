//===- CumSumTest.cpp - CumSum --------------------------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

TEST(CumSumTest, EveryDirection) {
  HostTensor x = f64({3}, {1, 2, 3});
  EXPECT_TRUE(isFloats(cumSum(x, 0, false, false), T::F64, {3}, {1, 3, 6}));
  EXPECT_TRUE(isFloats(cumSum(x, 0, true, false), T::F64, {3}, {0, 1, 3}));
  EXPECT_TRUE(isFloats(cumSum(x, 0, false, true), T::F64, {3}, {6, 5, 3}));
  EXPECT_TRUE(isFloats(cumSum(x, 0, true, true), T::F64, {3}, {5, 3, 0}));
}

TEST(CumSumTest, AlongEachAxisOfAMatrix) {
  HostTensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(isInts(cumSum(x, 0, false, false), T::I32, {2, 3}, {1, 2, 3, 5, 7, 9}));
  EXPECT_TRUE(isInts(cumSum(x, 1, false, false), T::I32, {2, 3}, {1, 3, 6, 4, 9, 15}));
  EXPECT_TRUE(isInts(cumSum(x, 1, true, true), T::I32, {2, 3}, {5, 3, 0, 11, 6, 0}));
  // Position ids from a padding mask: cumsum(mask) - 1 where the mask is 1.
  EXPECT_TRUE(isInts(cumSum(i64({2, 4}, {0, 1, 1, 1, 1, 1, 0, 1}), 1, false, false), T::I64,
                     {2, 4}, {0, 1, 2, 3, 1, 2, 2, 3}));
}

TEST(CumSumTest, IntegersWrapAndFloatsRoundEachSum) {
  const int64_t max32 = std::numeric_limits<int32_t>::max();
  EXPECT_TRUE(isInts(cumSum(i32({2}, {max32, 1}), 0, false, false), T::I32, {2},
                     {max32, std::numeric_limits<int32_t>::min()}));
  // Summed in double, then rounded to f16 per element: 2048 + 1 + 1 = 2050.
  EXPECT_TRUE(isFloats(cumSum(floats(T::F16, {3}, {2048, 1, 1}), 0, false, false), T::F16, {3},
                       {2048, 2048, 2050}));
}

TEST(CumSumTest, RejectsBadOperands) {
  EXPECT_TRUE(failsWith(cumSum(i32({2}, {1, 2}), 1, false, false), "axis 1 is out of range"));
  EXPECT_TRUE(failsWith(cumSum(ints(T::I8, {1}, {1}), 0, false, false),
                        "cumsum needs an int32, int64 or float operand but got i8"));
  EXPECT_TRUE(failsWith(cumSum(bools({1}, {1}), 0, false, false), "but got bool"));
}

} // namespace
} // namespace shardc::constfold::test
