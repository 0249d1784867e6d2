//===- ReductionTest.cpp - reduce, softmax, topk --------------------------===//
#include "TestUtil.h"

#include <limits>

namespace shardc::rt::cpu::test {
namespace {

cf::ReduceOp reference(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return cf::ReduceOp::Sum;
  case ReduceOp::Mean: return cf::ReduceOp::Mean;
  case ReduceOp::Max: return cf::ReduceOp::Max;
  case ReduceOp::Min: return cf::ReduceOp::Min;
  }
  return cf::ReduceOp::Sum;
}

Shape reducedShape(const Shape &shape, const std::vector<int64_t> &axes, bool keepdims) {
  Shape result;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
    if (!reduced)
      result.push_back(shape[d]);
    else if (keepdims)
      result.push_back(1);
  }
  return result;
}

TEST(CpuReduceTest, MatchesReferenceOverAxisSets) {
  ThreadScope threads(2);
  Rng rng(31);
  const std::vector<std::vector<int64_t>> axisSets = {
      {0}, {1}, {3}, {0, 2}, {1, 3}, {0, 3}, {1, 2}, {0, 1, 2, 3}, {2, 3}, {0, 1}};
  const Shape shapes[] = {{3, 4, 5, 6}, {2, 1, 7, 65}, {1, 3, 1, 1}, {5, 130, 2, 3}};
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::I32, DType::I8, DType::I64}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
      for (const Shape &shape : shapes) {
        for (const auto &axes : axisSets) {
          // Mean of integers would fail in the reference when the sum
          // overflows the type; keep I8 small enough for that.
          HostTensor x = random(type, shape, rng, type == DType::I8 ? -1 : -100,
                                type == DType::I8 ? 1 : 100);
          CTensor want = expectOk(cf::reduce(reference(op), toConst(x), axes, true));
          for (bool keepdims : {true, false}) {
            HostTensor out(type, reducedShape(shape, axes, keepdims));
            ASSERT_TRUE(succeeded(reduce(op, x.view(), axes, keepdims, out.view())));
            want.shape = out.shape;
            const double rtol = type == DType::F16 ? 1e-3 : type == DType::F32 ? 1e-6 : 1e-12;
            EXPECT_TRUE(closeTo(out, want, rtol, rtol))
                << reduceOpName(op) << " " << dtypeName(type) << " " << formatShape(shape)
                << " axes " << formatShape(axes);
          }
        }
      }
    }
  }
}

TEST(CpuReduceTest, LongSumsAccumulateInDouble) {
  // 1e6 copies of 0.1f: an fp32 accumulator drifts by ~1%, double is exact
  // to the final rounding.
  HostTensor x = filled(DType::F32, {1000000}, 0.1);
  HostTensor out(DType::F32, {});
  ASSERT_TRUE(succeeded(reduce(ReduceOp::Sum, x.view(), {0}, false, out.view())));
  EXPECT_NEAR(getDouble(out, 0), 1e6 * double(0.1f), 0.07);
}

TEST(CpuReduceTest, EmptyAxesCopyAndEmptyReductionsGiveIdentities) {
  HostTensor x = make(DType::F32, {2, 2}, {1, 2, 3, 4});
  HostTensor copied(DType::F32, {2, 2});
  ASSERT_TRUE(succeeded(reduce(ReduceOp::Sum, x.view(), {}, false, copied.view())));
  EXPECT_TRUE(closeTo(copied, {2, 2}, {1, 2, 3, 4}, 0));
  HostTensor empty(DType::F32, {0, 3});
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::pair<ReduceOp, double> cases[] = {
      {ReduceOp::Sum, 0}, {ReduceOp::Mean, nan}, {ReduceOp::Max, -inf}, {ReduceOp::Min, inf}};
  for (const auto &[op, value] : cases) {
    HostTensor out(DType::F32, {3});
    ASSERT_TRUE(succeeded(reduce(op, empty.view(), {0}, false, out.view())));
    EXPECT_TRUE(closeTo(out, {3}, {value, value, value}, 0)) << reduceOpName(op);
  }
  HostTensor ints(DType::I32, {3, 0});
  HostTensor out(DType::I32, {3, 1});
  ASSERT_TRUE(succeeded(reduce(ReduceOp::Max, ints.view(), {1}, true, out.view())));
  EXPECT_EQ(getInt(out, 0), std::numeric_limits<int32_t>::min());
}

TEST(CpuReduceTest, MaxPropagatesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = make(DType::F32, {2, 3}, {1, nan, 3, 4, 5, 6});
  HostTensor out(DType::F32, {2});
  ASSERT_TRUE(succeeded(reduce(ReduceOp::Max, x.view(), {1}, false, out.view())));
  EXPECT_TRUE(closeTo(out, {2}, {nan, 6}, 0));
}

TEST(CpuReduceTest, RejectsBadAxesAndShapes) {
  HostTensor x(DType::F32, {2, 3}), out(DType::F32, {2});
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x.view(), {1, 0}, false, out.view()),
                        "reduce_sum: axes must be strictly increasing; got [1, 0]"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x.view(), {2}, false, out.view()),
                        "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Sum, x.view(), {1}, true, out.view()),
                        "result shape differs; expected [2, 1] but got [2]"));
  HostTensor b(DType::Bool, {2, 3}), bo(DType::Bool, {2});
  EXPECT_TRUE(failsWith(reduce(ReduceOp::Max, b.view(), {1}, false, bo.view()),
                        "needs an integer or float input but got bool"));
}

TEST(CpuSoftmaxTest, MatchesReferenceOnEveryAxis) {
  ThreadScope threads(2);
  Rng rng(32);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    for (const Shape &shape : {Shape{3, 4, 70}, Shape{2, 130, 5}, Shape{1000, 33}, Shape{7}}) {
      for (int64_t axis = 0; axis < int64_t(shape.size()); ++axis) {
        HostTensor x = random(type, shape, rng, -8, 8);
        CTensor want = expectOk(cf::softmax(toConst(x), axis));
        HostTensor out(type, shape);
        ASSERT_TRUE(succeeded(softmax(x.view(), axis, out.view())));
        const double rtol = type == DType::F16 ? 2e-3 : type == DType::BF16 ? 1.6e-2 : 1e-5;
        EXPECT_TRUE(closeTo(out, want, rtol, 1e-7))
            << dtypeName(type) << " " << formatShape(shape) << " axis " << axis;
      }
    }
  }
}

TEST(CpuSoftmaxTest, LargeLogitsAreStableAndInPlaceWorks) {
  HostTensor x = make(DType::F32, {2, 3}, {1000, 1001, 1002, -1000, -1e30, -999});
  CTensor want = expectOk(cf::softmax(toConst(x), 1));
  ASSERT_TRUE(succeeded(softmax(x.view(), 1, x.view())));
  EXPECT_TRUE(closeTo(x, want, 1e-6, 1e-30));
}

TEST(CpuTopKTest, MatchesReferenceWithTiesAndNaN) {
  ThreadScope threads(2);
  Rng rng(33);
  for (DType type : {DType::F32, DType::I32, DType::I64, DType::F16, DType::U8}) {
    for (const Shape &shape : {Shape{4, 9}, Shape{3, 17, 5}, Shape{300, 40}}) {
      for (int64_t axis = 0; axis < int64_t(shape.size()); ++axis) {
        for (bool largest : {true, false}) {
          // Few distinct values: many ties, which must keep the lower index.
          HostTensor x = random(type, shape, rng, 0, 6);
          if (type == DType::F32)
            setDouble(x, 3, std::numeric_limits<double>::quiet_NaN());
          const int64_t dim = shape[size_t(axis)];
          for (int64_t k : {int64_t(0), int64_t(1), dim / 2, dim}) {
            auto want = cf::topk(toConst(x), k, axis, largest, true);
            ASSERT_TRUE(want.ok()) << want.message();
            HostTensor values(type, want->values.shape), indices(DType::I64, want->values.shape);
            ASSERT_TRUE(succeeded(
                topk(x.view(), k, axis, largest, true, values.view(), indices.view())));
            EXPECT_TRUE(closeTo(values, want->values, 0));
            EXPECT_TRUE(closeTo(indices, want->indices, 0))
                << dtypeName(type) << " " << formatShape(shape) << " axis " << axis << " k " << k
                << " largest " << largest;
          }
        }
      }
    }
  }
}

TEST(CpuTopKTest, RejectsBadK) {
  HostTensor x(DType::F32, {2, 3}), v(DType::F32, {2, 4}), i(DType::I64, {2, 4});
  EXPECT_TRUE(failsWith(topk(x.view(), 4, 1, true, true, v.view(), i.view()),
                        "topk: k out of range; expected 0 <= k <= 3 but got 4"));
  HostTensor v2(DType::F32, {2, 2}), i32(DType::I32, {2, 2});
  EXPECT_TRUE(failsWith(topk(x.view(), 2, 1, true, true, v2.view(), i32.view()),
                        "indices element type differs; expected int64"));
}

} // namespace
} // namespace shardc::rt::cpu::test
