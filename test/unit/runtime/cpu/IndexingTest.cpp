//===- IndexingTest.cpp - gather, scatter_elements, trilu -----------------===//
#include "TestUtil.h"

#include <limits>

namespace shardc::rt::cpu::test {
namespace {

TEST(CpuGatherTest, MatchesReferenceWithNegativeIndices) {
  ThreadScope threads(2);
  Rng rng(81);
  const std::pair<Shape, Shape> cases[] = {
      {{50, 16}, {2, 7}}, // embedding lookup
      {{3, 5, 4}, {6}},   {{3, 5, 4}, {}}, {{3, 5, 4}, {2, 2}}, {{1000, 64}, {300}}, {{4}, {0}}};
  for (DType type : {DType::F32, DType::F16, DType::I64, DType::Bool, DType::I8}) {
    for (DType indexType : {DType::I64, DType::I32}) {
      for (const auto &[dataShape, indexShape] : cases) {
        for (int64_t axis = 0; axis < int64_t(dataShape.size()); ++axis) {
          const int64_t dim = dataShape[size_t(axis)];
          HostTensor data = random(type, dataShape, rng, -100, 100);
          HostTensor indices = random(indexType, indexShape, rng, double(-dim), double(dim - 1));
          CTensor want = expectOk(cf::gather(toConst(data), toConst(indices), axis));
          HostTensor out(type, want.shape);
          ASSERT_TRUE(succeeded(gather(data.view(), indices.view(), axis, out.view())));
          EXPECT_TRUE(closeTo(out, want, 0)) << formatShape(dataShape) << " axis " << axis;
        }
      }
    }
  }
}

TEST(CpuGatherTest, OutOfRangeIndicesAreErrorsNotCrashes) {
  HostTensor data(DType::F32, {5, 2}), out(DType::F32, {3, 2});
  HostTensor high = make(DType::I64, {3}, {0, 5, 1}), low = make(DType::I32, {3}, {-6, 0, 1});
  EXPECT_TRUE(failsWith(gather(data.view(), high.view(), 0, out.view()),
                        "gather: index 5 (element 1) is out of range for axis 0 of size 5"));
  EXPECT_TRUE(failsWith(gather(data.view(), low.view(), 0, out.view()),
                        "index -6 (element 0) is out of range"));
  HostTensor floats(DType::F32, {3});
  EXPECT_TRUE(failsWith(gather(data.view(), floats.view(), 0, out.view()),
                        "indices must be int32 or int64 but got float32"));
}

TEST(CpuScatterTest, MatchesReferenceForEveryReduction) {
  ThreadScope threads(2);
  Rng rng(82);
  struct Case {
    Shape data, indices;
    int64_t axis;
  };
  const Case cases[] = {{{4, 5}, {3, 5}, 0},      {{4, 5}, {4, 2}, 1},   {{3, 4, 5}, {2, 6, 3}, 1},
                        {{6}, {10}, 0},           {{200, 40}, {200, 60}, 1}, {{3, 4}, {0, 4}, 0}};
  for (DType type : {DType::F32, DType::I32, DType::I64, DType::F16, DType::U8}) {
    for (ScatterReduction r : {ScatterReduction::None, ScatterReduction::Add, ScatterReduction::Mul,
                               ScatterReduction::Max, ScatterReduction::Min}) {
      for (const Case &c : cases) {
        const int64_t dim = c.data[size_t(c.axis)];
        HostTensor data = random(type, c.data, rng, 0, 9);
        // Duplicate targets on purpose: few distinct indices.
        HostTensor indices = random(DType::I64, c.indices, rng, double(-dim), double(dim - 1));
        HostTensor updates = random(type, c.indices, rng, 0, 9);
        CTensor want = expectOk(cf::scatterElements(toConst(data), toConst(indices),
                                                    toConst(updates), c.axis, scatterReduction(r)));
        HostTensor out(type, c.data);
        ASSERT_TRUE(succeeded(
            scatterElements(data.view(), indices.view(), updates.view(), c.axis, r, out.view())));
        EXPECT_TRUE(closeTo(out, want, type == DType::F16 ? 1e-3 : 1e-6))
            << dtypeName(type) << " " << scatterReductionName(r) << " " << formatShape(c.data);
        // In place gives the same.
        ASSERT_TRUE(succeeded(
            scatterElements(data.view(), indices.view(), updates.view(), c.axis, r, data.view())));
        EXPECT_TRUE(sameBits(data, out));
      }
    }
  }
}

TEST(CpuScatterTest, RejectsBadOperands) {
  HostTensor data(DType::F32, {3, 4}), out(DType::F32, {3, 4});
  HostTensor indices = make(DType::I64, {1, 4}, {0, 1, 3, 2}), updates(DType::F32, {1, 4});
  EXPECT_TRUE(failsWith(scatterElements(data.view(), indices.view(), updates.view(), 0,
                                        ScatterReduction::None, out.view()),
                        "scatter_elements: index 3 (element 2) is out of range for axis 0 of size 3"));
  HostTensor wide(DType::I64, {1, 5}), wideUpdates(DType::F32, {1, 5});
  EXPECT_TRUE(failsWith(scatterElements(data.view(), wide.view(), wideUpdates.view(), 0,
                                        ScatterReduction::None, out.view()),
                        "indices [1, 5] do not fit data [3, 4] outside axis 0"));
  HostTensor other(DType::F32, {2, 4});
  EXPECT_TRUE(failsWith(scatterElements(data.view(), indices.view(), other.view(), 0,
                                        ScatterReduction::None, out.view()),
                        "indices and updates shapes differ"));
  HostTensor flags(DType::Bool, {3, 4}), flagUpdates(DType::Bool, {1, 4});
  EXPECT_TRUE(failsWith(scatterElements(flags.view(), indices.view(), flagUpdates.view(), 0,
                                        ScatterReduction::Add, flags.view()),
                        "reduction add needs integer or float data but got bool"));
  EXPECT_EQ(scatterReductionFromName("max"), ScatterReduction::Max);
}

TEST(CpuTriluTest, MatchesReference) {
  Rng rng(83);
  for (DType type : {DType::F32, DType::I64, DType::Bool, DType::F16}) {
    for (const Shape &shape : {Shape{4, 6}, Shape{2, 3, 5, 5}, Shape{7, 3}, Shape{0, 3}}) {
      for (int64_t k : {int64_t(-100), int64_t(-2), int64_t(0), int64_t(1), int64_t(4),
                        std::numeric_limits<int64_t>::max()}) {
        for (bool upper : {true, false}) {
          HostTensor x = random(type, shape, rng, -100, 100);
          CTensor want = expectOk(cf::trilu(toConst(x), k, upper));
          HostTensor out(type, shape);
          ASSERT_TRUE(succeeded(trilu(x.view(), k, upper, out.view())));
          EXPECT_TRUE(closeTo(out, want, 0)) << formatShape(shape) << " k " << k;
          ASSERT_TRUE(succeeded(trilu(x.view(), k, upper, x.view()))); // in place
          EXPECT_TRUE(sameBits(x, out));
        }
      }
    }
  }
  HostTensor v(DType::F32, {3});
  EXPECT_TRUE(failsWith(trilu(v.view(), 0, true, v.view()), "trilu: needs a tensor of rank >= 2"));
}

} // namespace
} // namespace shardc::rt::cpu::test
