//===- ReductionTest.cpp - Reduce, Softmax, TopK --------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ReduceTest, SumWithAndWithoutKeepdims) {
  HostTensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {0}, false), T::I32, {3}, {5, 7, 9}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {0}, true), T::I32, {1, 3}, {5, 7, 9}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {1}, false), T::I32, {2}, {6, 15}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {1}, true), T::I32, {2, 1}, {6, 15}));
}

TEST(ReduceTest, EmptyAxesReduceEverything) {
  HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, x, {}, false), T::F32, {}, {21}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, x, {}, true), T::F32, {1, 1}, {21}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Mean, x, {0, 1}, false), T::F32, {}, {3.5}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Prod, f32({}, {7}), {}, false), T::F32, {}, {7}));
}

TEST(ReduceTest, EveryOp) {
  HostTensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Mean, x, {1}, false), T::F32, {2}, {2, 5}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Max, x, {0}, false), T::F32, {3}, {4, 5, 6}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Min, x, {0}, false), T::F32, {3}, {1, 2, 3}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Prod, x, {0}, false), T::F32, {3}, {4, 10, 18}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::SumSquare, x, {0}, false), T::F32, {3}, {17, 29, 45}));
  HostTensor n = i64({2, 3}, {1, -2, 3, 4, 5, -6});
  EXPECT_TRUE(isInts(reduce(ReduceOp::Max, n, {1}, false), T::I64, {2}, {3, 5}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Min, n, {1}, false), T::I64, {2}, {-2, -6}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Prod, n, {1}, false), T::I64, {2}, {-6, -120}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::SumSquare, n, {1}, false), T::I64, {2}, {14, 77}));
}

TEST(ReduceTest, NonContiguousAndUnsortedAxes) {
  std::vector<int64_t> values;
  for (int64_t v = 0; v < 12; ++v)
    values.push_back(v);
  HostTensor x = i32({2, 3, 2}, values);
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {0, 2}, false), T::I32, {3}, {14, 22, 30}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, x, {2, 0}, true), T::I32, {1, 3, 1}, {14, 22, 30}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Max, x, {1}, false), T::I32, {2, 2}, {4, 5, 10, 11}));
}

TEST(ReduceTest, IntegerSemantics) {
  constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
  // Sum wraps like Add.
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, i32({2}, {kI32Max, 1}), {}, false), T::I32, {},
                     {std::numeric_limits<int32_t>::min()}));
  // Mean truncates toward zero.
  EXPECT_TRUE(isInts(reduce(ReduceOp::Mean, i32({2, 3}, {1, 2, 4, -1, -2, -4}), {1}, false),
                     T::I32, {2}, {2, -2}));
  // ...and refuses when the sum does not fit, since runtimes would wrap it.
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Mean, i32({2}, {kI32Max, kI32Max}), {}, false),
                        "integer mean: the sum does not fit i32"));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Sum, ints(T::U8, {2}, {200, 100}), {}, false), T::U8, {},
                     {44}));
}

TEST(ReduceTest, EmptyReductions) {
  HostTensor x = f32({2, 0}, {});
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, x, {1}, false), T::F32, {2}, {0, 0}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::SumSquare, x, {1}, false), T::F32, {2}, {0, 0}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Prod, x, {1}, false), T::F32, {2}, {1, 1}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Max, x, {1}, false), T::F32, {2}, {-kInf, -kInf}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Min, x, {1}, false), T::F32, {2}, {kInf, kInf}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Mean, x, {1}, false), T::F32, {2}, {kNaN, kNaN}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, x, {0}, true), T::F32, {1, 0}, {}));
  HostTensor n = i32({0}, {});
  EXPECT_TRUE(isInts(reduce(ReduceOp::Max, n, {}, false), T::I32, {},
                     {std::numeric_limits<int32_t>::min()}));
  EXPECT_TRUE(isInts(reduce(ReduceOp::Min, ints(T::U8, {0}, {}), {}, false), T::U8, {}, {255}));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Mean, n, {}, false), "empty reduction"));
}

TEST(ReduceTest, FloatsAccumulateInDoubleAndRoundOnce) {
  // In f32 arithmetic 1e8 + 1 is 1e8 again; in double it is not.
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, f32({3}, {1e8, 1, -1e8}), {}, false), T::F32, {},
                       {1}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Sum, floats(T::F16, {3}, {2048, 1, 1}), {}, false),
                       T::F16, {}, {2050}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Max, f32({3}, {1, kNaN, 3}), {}, false), T::F32, {},
                       {kNaN}));
  EXPECT_TRUE(isFloats(reduce(ReduceOp::Min, f32({3}, {kNaN, 1, 3}), {}, false), T::F32, {},
                       {kNaN}));
}

TEST(ReduceTest, RejectsBadInput) {
  HostTensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x, {2}, false), "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x, {-1}, false), "axis -1 is out of range"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x, {1, 1}, false), "repeat axis 1"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, bools({1}, {1}), {}, false), "but got bool"));
}

TEST(SoftmaxTest, AlongEachAxis) {
  EXPECT_TRUE(isFloats(softmax(f64({2, 3}, {1, 2, 3, 1, 1, 1}), 1), T::F64, {2, 3},
                       {0.09003057317038046, 0.24472847105479764, 0.6652409557748219,
                        1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-15));
  EXPECT_TRUE(isFloats(softmax(f32({2, 2}, {0, 5, 0, 5}), 0), T::F32, {2, 2},
                       {0.5, 0.5, 0.5, 0.5}));
}

TEST(SoftmaxTest, IsNumericallyCareful) {
  // exp(1000) overflows; subtracting the row maximum first avoids it.
  EXPECT_TRUE(isFloats(softmax(f32({3}, {1000, 1000, -kInf}), 0), T::F32, {3}, {0.5, 0.5, 0}));
  EXPECT_TRUE(isFloats(softmax(f32({2}, {-1000, -1000}), 0), T::F32, {2}, {0.5, 0.5}));
  EXPECT_TRUE(isFloats(softmax(floats(T::F16, {2}, {60000, 0}), 0), T::F16, {2}, {1, 0}));
  EXPECT_TRUE(isFloats(softmax(f32({2, 0}, {}), 1), T::F32, {2, 0}, {}));
  // Empty, but with a dim too large to size any buffer by.
  EXPECT_TRUE(isFloats(softmax(f32({0, int64_t(1) << 40}, {}), 0), T::F32,
                       {0, int64_t(1) << 40}, {}));
}

TEST(SoftmaxTest, RejectsBadInput) {
  EXPECT_TRUE(failsWith(softmax(i32({2}, {1, 2}), 0), "softmax needs a float operand"));
  EXPECT_TRUE(failsWith(softmax(f32({2}, {1, 2}), 1), "axis 1 is out of range for rank 1"));
}

TEST(TopKTest, LargestAndSmallestWithTies) {
  HostTensor x = i32({2, 5}, {3, 1, 3, 2, 5, 0, 0, 0, 0, 0});
  StatusOr<TopKResult> top = topk(x, 3, 1, true, true);
  ASSERT_TRUE(top) << top.message();
  EXPECT_TRUE(isInts(top->values, T::I32, {2, 3}, {5, 3, 3, 0, 0, 0}));
  EXPECT_TRUE(isInts(top->indices, T::I64, {2, 3}, {4, 0, 2, 0, 1, 2}));

  StatusOr<TopKResult> bottom = topk(x, 2, 1, false, true);
  ASSERT_TRUE(bottom) << bottom.message();
  EXPECT_TRUE(isInts(bottom->values, T::I32, {2, 2}, {1, 2, 0, 0}));
  EXPECT_TRUE(isInts(bottom->indices, T::I64, {2, 2}, {1, 3, 0, 1}));
}

TEST(TopKTest, OuterAxis) {
  // Columns [1,5,5] and [6,2,4].
  StatusOr<TopKResult> top = topk(f32({3, 2}, {1, 6, 5, 2, 5, 4}), 2, 0, true, false);
  ASSERT_TRUE(top) << top.message();
  EXPECT_TRUE(isFloats(top->values, T::F32, {2, 2}, {5, 6, 5, 4}));
  EXPECT_TRUE(isInts(top->indices, T::I64, {2, 2}, {1, 0, 2, 2}));
}

TEST(TopKTest, NaNOrdersAboveNumbers) {
  HostTensor x = f32({4}, {1, kNaN, 3, kNaN});
  StatusOr<TopKResult> top = topk(x, 3, 0, true, true);
  ASSERT_TRUE(top) << top.message();
  EXPECT_TRUE(isFloats(top->values, T::F32, {3}, {kNaN, kNaN, 3}));
  EXPECT_TRUE(isInts(top->indices, T::I64, {3}, {1, 3, 2}));
  StatusOr<TopKResult> bottom = topk(x, 3, 0, false, true);
  ASSERT_TRUE(bottom) << bottom.message();
  EXPECT_TRUE(isInts(bottom->indices, T::I64, {3}, {0, 2, 1}));
}

TEST(TopKTest, EdgeCasesAndBadInput) {
  HostTensor x = i32({2, 3}, {1, 2, 3, 4, 5, 6});
  StatusOr<TopKResult> none = topk(x, 0, 1, true, true);
  ASSERT_TRUE(none) << none.message();
  EXPECT_TRUE(isInts(none->values, T::I32, {2, 0}, {}));
  StatusOr<TopKResult> empty = topk(i32({0, int64_t(1) << 40}, {}), 2, 1, true, true);
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_TRUE(isInts(empty->indices, T::I64, {0, 2}, {}));
  EXPECT_TRUE(failsWith(topk(x, 4, 1, true, true), "topk k = 4 is out of range for axis 1 of size 3"));
  EXPECT_TRUE(failsWith(topk(x, -1, 1, true, true), "out of range"));
  EXPECT_TRUE(failsWith(topk(x, 1, 2, true, true), "axis 2 is out of range"));
  EXPECT_TRUE(failsWith(topk(bools({1}, {1}), 1, 0, true, true), "but got bool"));
}

} // namespace
} // namespace shardc::constfold::test
