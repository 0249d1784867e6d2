//===- IndexingTest.cpp - Gather, ScatterElements, Trilu ------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

TEST(GatherTest, Axis0WithMatrixOfIndices) {
  HostTensor data = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(isFloats(gather(data, i64({2, 2}, {0, 1, 1, 2}), 0), T::F32, {2, 2, 2},
                       {1, 2, 3, 4, 3, 4, 5, 6}));
}

TEST(GatherTest, InnerAxisAndNegativeIndices) {
  HostTensor data = i32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(isInts(gather(data, i64({1, 2}, {0, -1}), 1), T::I32, {3, 1, 2},
                     {1, 3, 4, 6, 7, 9}));
  // A scalar index drops the axis.
  EXPECT_TRUE(isInts(gather(data, i64({}, {-3}), 0), T::I32, {3}, {1, 2, 3}));
  EXPECT_TRUE(isInts(gather(data, i32({2}, {2, -2}), 0), T::I32, {2, 3},
                     {7, 8, 9, 4, 5, 6}));
  EXPECT_TRUE(isInts(gather(data, i64({0}, {}), 1), T::I32, {3, 0}, {}));
}

TEST(GatherTest, RejectsBadIndices) {
  HostTensor data = i32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(failsWith(gather(data, i64({1}, {3}), 0),
                        "gather index 3 is out of range for axis 0 of size 3"));
  EXPECT_TRUE(failsWith(gather(data, i64({1}, {-4}), 0), "gather index -4 is out of range"));
  EXPECT_TRUE(failsWith(gather(data, i64({1}, {std::numeric_limits<int64_t>::min()}), 0),
                        "out of range"));
  EXPECT_TRUE(failsWith(gather(data, f32({1}, {0}), 0), "integer type but got f32"));
  EXPECT_TRUE(failsWith(gather(data, i64({1}, {0}), 2), "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(failsWith(gather(i32({}, {1}), i64({1}, {0}), 0), "out of range for rank 0"));
}

TEST(ScatterElementsTest, OnnxExamples) {
  HostTensor data = f32({3, 3}, std::vector<double>(9, 0));
  HostTensor indices = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  HostTensor updates = f32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2});
  EXPECT_TRUE(isFloats(scatterElements(data, indices, updates, 0, ScatterReduction::None),
                       T::F32, {3, 3},
                       {2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2}, kF32Tolerance));

  HostTensor row = f32({1, 5}, {1, 2, 3, 4, 5});
  EXPECT_TRUE(isFloats(scatterElements(row, i64({1, 2}, {1, 3}), f32({1, 2}, {1.1, 2.1}), 1,
                                       ScatterReduction::None),
                       T::F32, {1, 5}, {1, 1.1, 3, 2.1, 5}, kF32Tolerance));
  // Negative indices count from the end of the axis.
  EXPECT_TRUE(isFloats(scatterElements(row, i64({1, 2}, {1, -3}), f32({1, 2}, {1.1, 2.1}), 1,
                                       ScatterReduction::None),
                       T::F32, {1, 5}, {1, 1.1, 2.1, 4, 5}, kF32Tolerance));
}

TEST(ScatterElementsTest, Reductions) {
  HostTensor data = i32({5}, {1, 2, 3, 4, 5});
  HostTensor indices = i64({3}, {0, 0, 4});
  HostTensor updates = i32({3}, {10, 20, 3});
  auto run = [&](ScatterReduction r) { return scatterElements(data, indices, updates, 0, r); };
  EXPECT_TRUE(isInts(run(ScatterReduction::None), T::I32, {5}, {20, 2, 3, 4, 3}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Add), T::I32, {5}, {31, 2, 3, 4, 8}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Mul), T::I32, {5}, {200, 2, 3, 4, 15}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Max), T::I32, {5}, {20, 2, 3, 4, 5}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Min), T::I32, {5}, {1, 2, 3, 4, 3}));
  // Reductions wrap like the element type.
  EXPECT_TRUE(isInts(scatterElements(ints(T::I8, {1}, {100}), i64({2}, {0, 0}),
                                     ints(T::I8, {2}, {100, 1}), 0, ScatterReduction::Add),
                     T::I8, {1}, {-55}));
  // Float reductions round after every step, like a runtime working in f16.
  EXPECT_TRUE(isFloats(scatterElements(floats(T::F16, {1}, {2048}), i64({2}, {0, 0}),
                                       floats(T::F16, {2}, {1, 1}), 0, ScatterReduction::Add),
                       T::F16, {1}, {2048}));
}

TEST(ScatterElementsTest, IndicesSmallerThanData) {
  // indices [1,2] into data [2,3] along axis 1: only row 0, first two positions.
  EXPECT_TRUE(isInts(scatterElements(i32({2, 3}, {0, 0, 0, 0, 0, 0}), i64({1, 2}, {2, 0}),
                                     i32({1, 2}, {7, 8}), 1, ScatterReduction::None),
                     T::I32, {2, 3}, {8, 0, 7, 0, 0, 0}));
}

TEST(ScatterElementsTest, RejectsBadInput) {
  HostTensor data = i32({2, 2}, {1, 2, 3, 4});
  auto none = ScatterReduction::None;
  EXPECT_TRUE(failsWith(scatterElements(data, i64({1, 1}, {2}), i32({1, 1}, {0}), 0, none),
                        "scatter index 2 is out of range for axis 0 of size 2"));
  EXPECT_TRUE(failsWith(scatterElements(data, i64({1, 2}, {0, 0}), i32({1, 1}, {0}), 0, none),
                        "must have the same shape"));
  EXPECT_TRUE(failsWith(scatterElements(data, i64({1, 3}, {0, 0, 0}), i32({1, 3}, {0, 0, 0}),
                                        0, none),
                        "do not fit data [2,2]"));
  EXPECT_TRUE(failsWith(scatterElements(data, i64({2}, {0, 0}), i32({2}, {0, 0}), 0, none),
                        "do not fit"));
  EXPECT_TRUE(failsWith(scatterElements(data, i64({1, 1}, {0}), i64({1, 1}, {0}), 0, none),
                        "same element type"));
  EXPECT_TRUE(failsWith(scatterElements(bools({1}, {0}), i64({1}, {0}), bools({1}, {1}), 0,
                                        ScatterReduction::Add),
                        "not bool"));
  EXPECT_TRUE(failsWith(scatterElements(data, i64({1, 1}, {0}), i32({1, 1}, {0}), 2, none),
                        "axis 2 is out of range"));
}

TEST(ScatterElementsTest, ParsesReductionNames) {
  EXPECT_EQ(parseScatterReduction("none"), ScatterReduction::None);
  EXPECT_EQ(parseScatterReduction("add"), ScatterReduction::Add);
  EXPECT_EQ(parseScatterReduction("mul"), ScatterReduction::Mul);
  EXPECT_EQ(parseScatterReduction("max"), ScatterReduction::Max);
  EXPECT_EQ(parseScatterReduction("min"), ScatterReduction::Min);
  EXPECT_EQ(parseScatterReduction("sum"), std::nullopt);
}

// Two 3x4 matrices: [[1..4],[5..8],[9..12]] and the same plus 12.
HostTensor batch() {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= 24; ++v)
    values.push_back(v);
  return i32({2, 3, 4}, values);
}

TEST(TriluTest, UpperOnABatch) {
  EXPECT_TRUE(isInts(trilu(batch(), 0, true), T::I32, {2, 3, 4},
                     {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12,
                      13, 14, 15, 16, 0, 18, 19, 20, 0, 0, 23, 24}));
  EXPECT_TRUE(isInts(trilu(batch(), 1, true), T::I32, {2, 3, 4},
                     {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12,
                      0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24}));
  EXPECT_TRUE(isInts(trilu(batch(), -1, true), T::I32, {2, 3, 4},
                     {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12,
                      13, 14, 15, 16, 17, 18, 19, 20, 0, 22, 23, 24}));
}

TEST(TriluTest, LowerOnABatch) {
  EXPECT_TRUE(isInts(trilu(batch(), 0, false), T::I32, {2, 3, 4},
                     {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0,
                      13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0}));
  EXPECT_TRUE(isInts(trilu(batch(), -1, false), T::I32, {2, 3, 4},
                     {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0,
                      0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0}));
  EXPECT_TRUE(isInts(trilu(batch(), 2, false), T::I32, {2, 3, 4},
                     {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12,
                      13, 14, 15, 0, 17, 18, 19, 20, 21, 22, 23, 24}));
}

TEST(TriluTest, KBeyondTheMatrix) {
  HostTensor m = i32({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(isInts(trilu(m, 10, true), T::I32, {2, 2}, {0, 0, 0, 0}));
  EXPECT_TRUE(isInts(trilu(m, -10, true), T::I32, {2, 2}, {1, 2, 3, 4}));
  EXPECT_TRUE(isInts(trilu(m, 10, false), T::I32, {2, 2}, {1, 2, 3, 4}));
  EXPECT_TRUE(isInts(trilu(m, std::numeric_limits<int64_t>::min(), false), T::I32, {2, 2},
                     {0, 0, 0, 0}));
  EXPECT_TRUE(isInts(trilu(m, std::numeric_limits<int64_t>::max(), false), T::I32, {2, 2},
                     {1, 2, 3, 4}));
}

TEST(TriluTest, OtherTypesAndShapes) {
  EXPECT_TRUE(isFloats(trilu(f32({2, 2}, {1, 2, 3, 4}), 0, true), T::F32, {2, 2}, {1, 2, 0, 4}));
  EXPECT_TRUE(isInts(trilu(bools({2, 2}, {1, 1, 1, 1}), 0, false), T::Bool, {2, 2},
                     {1, 0, 1, 1}));
  EXPECT_TRUE(isInts(trilu(i32({0, 3, 3}, {}), 0, true), T::I32, {0, 3, 3}, {}));
  EXPECT_TRUE(failsWith(trilu(i32({3}, {1, 2, 3}), 0, true), "rank >= 2"));
}

} // namespace
} // namespace shardc::constfold::test
