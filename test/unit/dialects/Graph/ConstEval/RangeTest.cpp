//===- RangeTest.cpp - ONNX Range -----------------------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

TEST(RangeTest, Integers) {
  EXPECT_TRUE(isInts(rangeInt(T::I64, 0, 5, 1), T::I64, {5}, {0, 1, 2, 3, 4}));
  EXPECT_TRUE(isInts(rangeInt(T::I64, 0, 10, 3), T::I64, {4}, {0, 3, 6, 9}));
  EXPECT_TRUE(isInts(rangeInt(T::I32, 10, 0, -3), T::I32, {4}, {10, 7, 4, 1}));
  EXPECT_TRUE(isInts(rangeInt(T::I16, -1, -4, -1), T::I16, {3}, {-1, -2, -3}));
}

TEST(RangeTest, EmptyRanges) {
  EXPECT_TRUE(isInts(rangeInt(T::I64, 5, 5, 1), T::I64, {0}, {}));
  EXPECT_TRUE(isInts(rangeInt(T::I64, 5, 0, 1), T::I64, {0}, {}));
  EXPECT_TRUE(isInts(rangeInt(T::I64, 0, 5, -1), T::I64, {0}, {}));
  EXPECT_TRUE(isFloats(rangeFloat(T::F32, 0, 0, 0.5), T::F32, {0}, {}));
  EXPECT_TRUE(isFloats(rangeFloat(T::F32, 0, 5, -1), T::F32, {0}, {}));
}

TEST(RangeTest, ExactAtTheInt64Extremes) {
  // limit - start is 2^64 - 1 here, which no int64 holds.
  EXPECT_TRUE(isInts(rangeInt(T::I64, kI64Min, kI64Max, int64_t(1) << 62), T::I64, {4},
                     {kI64Min, -(int64_t(1) << 62), 0, int64_t(1) << 62}));
  EXPECT_TRUE(isInts(rangeInt(T::I64, kI64Max, kI64Min, kI64Min), T::I64, {2},
                     {kI64Max, -1}));
  EXPECT_TRUE(isInts(rangeInt(T::I32, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max(), int64_t(1) << 30),
                     T::I32, {4}, {-(int64_t(1) << 31), -(int64_t(1) << 30), 0, int64_t(1) << 30}));
}

TEST(RangeTest, Floats) {
  EXPECT_TRUE(isFloats(rangeFloat(T::F32, 0, 1, 0.25), T::F32, {4}, {0, 0.25, 0.5, 0.75}));
  // Through the tensor entry point the operands are f32 values already.
  HostTensor start = HostTensor::scalarFloat(T::F32, 1);
  HostTensor limit = HostTensor::scalarFloat(T::F32, 0);
  HostTensor delta = HostTensor::scalarFloat(T::F32, -0.3);
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    expected.push_back(double(float(1.0 + i * double(-0.3f))));
  EXPECT_TRUE(isFloats(range(start, limit, delta), T::F32, {4}, expected));
  EXPECT_TRUE(isFloats(rangeFloat(T::F16, 0, 3, 1.5), T::F16, {2}, {0, 1.5}));
}

TEST(RangeTest, TensorEntryPoint) {
  EXPECT_TRUE(isInts(range(i64({}, {2}), i64({}, {8}), i64({}, {2})), T::I64, {3}, {2, 4, 6}));
  EXPECT_TRUE(isInts(range(i32({1}, {0}), i32({}, {3}), i32({}, {1})), T::I32, {3}, {0, 1, 2}));
  EXPECT_TRUE(failsWith(range(i64({}, {0}), i32({}, {3}), i64({}, {1})),
                        "range operands must share one type but got i64 and i32"));
  EXPECT_TRUE(failsWith(range(i64({2}, {0, 1}), i64({}, {3}), i64({}, {1})),
                        "range start must be a scalar but has shape [2]"));
  EXPECT_TRUE(failsWith(range(bools({}, {0}), bools({}, {1}), bools({}, {1})), "but got bool"));
}

TEST(RangeTest, RejectsBadInput) {
  EXPECT_TRUE(failsWith(rangeInt(T::I64, 0, 5, 0), "range delta is 0"));
  EXPECT_TRUE(failsWith(rangeFloat(T::F32, 0, 5, 0), "range delta is 0"));
  EXPECT_TRUE(failsWith(rangeInt(T::I64, 0, kI64Max, 1), "folding limit"));
  EXPECT_TRUE(failsWith(rangeFloat(T::F32, 0, 1e30, 1), "folding limit"));
  EXPECT_TRUE(failsWith(rangeFloat(T::F64, 0, 1, 1e-320), "folding limit"));
  EXPECT_TRUE(failsWith(rangeFloat(T::F32, 0, std::nan(""), 1), "must be finite"));
  EXPECT_TRUE(failsWith(rangeInt(T::I32, int64_t(1) << 40, 0, -1), "does not fit i32"));
  EXPECT_TRUE(failsWith(rangeInt(T::F32, 0, 1, 1), "needs an integer type"));
  EXPECT_TRUE(failsWith(rangeFloat(T::I32, 0, 1, 1), "needs a float type"));
}

} // namespace
} // namespace shardc::constfold::test
