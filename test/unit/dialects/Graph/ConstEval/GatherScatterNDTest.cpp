//===- GatherScatterNDTest.cpp - GatherElements, GatherND, ScatterND ------===//

#include "TestUtil.h"

namespace shardc::constfold::test {
namespace {

TEST(GatherElementsTest, OnnxExamplesAndNegativeIndices) {
  HostTensor data = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(isFloats(gatherElements(data, i64({2, 2}, {0, 0, 1, 0}), 1), T::F32, {2, 2},
                       {1, 1, 4, 3}));
  HostTensor grid = i32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(isInts(gatherElements(grid, i32({2, 3}, {1, 2, 0, 2, 0, 0}), 0), T::I32, {2, 3},
                     {4, 8, 3, 7, 2, 3}));
  // Negative indices count from the end of the axis.
  EXPECT_TRUE(isInts(gatherElements(grid, i64({2, 3}, {-1, -2, 0, -2, 0, 0}), 0), T::I32,
                     {2, 3}, {7, 5, 3, 4, 2, 3}));
  // Indices smaller than data outside the axis read its corner.
  EXPECT_TRUE(isInts(gatherElements(grid, i64({2, 1}, {2, 0}), 1), T::I32, {2, 1}, {3, 4}));
  EXPECT_TRUE(isInts(gatherElements(grid, i64({0, 3}, {}), 0), T::I32, {0, 3}, {}));
}

TEST(GatherElementsTest, RejectsBadOperands) {
  HostTensor grid = i32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(failsWith(gatherElements(grid, i64({1, 1}, {3}), 0),
                        "gather_elements index 3 is out of range for axis 0 of size 3"));
  EXPECT_TRUE(failsWith(gatherElements(grid, i64({1, 1}, {-4}), 1), "index -4 is out of range"));
  EXPECT_TRUE(failsWith(gatherElements(grid, i64({3}, {0, 0, 0}), 0), "do not fit data [3,3]"));
  EXPECT_TRUE(failsWith(gatherElements(grid, i64({4, 1}, {0, 0, 0, 0}), 1),
                        "indices [4,1] do not fit data [3,3] outside axis 1"));
  EXPECT_TRUE(failsWith(gatherElements(grid, f32({1, 1}, {0}), 0), "integer type but got f32"));
  EXPECT_TRUE(failsWith(gatherElements(grid, i64({1, 1}, {0}), 2), "axis 2 is out of range"));
}

TEST(GatherNDTest, OnnxExamples) {
  HostTensor square = i32({2, 2}, {0, 1, 2, 3});
  // Whole tuples give elements, shorter ones rows.
  EXPECT_TRUE(isInts(gatherND(square, i64({2, 2}, {0, 0, 1, 1}), 0), T::I32, {2}, {0, 3}));
  EXPECT_TRUE(isInts(gatherND(square, i64({2, 1}, {1, 0}), 0), T::I32, {2, 2}, {2, 3, 0, 1}));
  HostTensor cube = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(isFloats(gatherND(cube, i64({2, 2}, {0, 1, 1, 0}), 0), T::F32, {2, 2},
                       {2, 3, 4, 5}));
  EXPECT_TRUE(isFloats(gatherND(cube, i64({2, 1, 2}, {0, 1, 1, 0}), 0), T::F32, {2, 1, 2},
                       {2, 3, 4, 5}));
  // batch_dims 1: tuple i indexes batch i.
  EXPECT_TRUE(isFloats(gatherND(cube, i64({2, 1}, {1, 0}), 1), T::F32, {2, 2}, {2, 3, 4, 5}));
  // padding_mask[batch_idx, kv_idx] with negative indices.
  HostTensor mask = bools({2, 3}, {1, 1, 0, 1, 0, 0});
  EXPECT_TRUE(isInts(gatherND(mask, i64({3, 2}, {0, -1, -1, 0, 1, -2}), 0), T::Bool, {3},
                     {0, 1, 0}));
}

TEST(GatherNDTest, RejectsBadOperands) {
  HostTensor cube = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_TRUE(failsWith(gatherND(cube, i64({1, 2}, {0, 2}), 0),
                        "gather_nd index 2 is out of range for dim 1 of size 2"));
  EXPECT_TRUE(failsWith(gatherND(cube, i64({2, 1}, {0, -3}), 1), "index -3 is out of range"));
  EXPECT_TRUE(failsWith(gatherND(cube, i64({1, 4}, {0, 0, 0, 0}), 0),
                        "index tuples have 4 entries; expected 1 to 3"));
  EXPECT_TRUE(failsWith(gatherND(cube, i64({3, 1}, {0, 0, 0}), 1), "batch dims of data"));
  EXPECT_TRUE(failsWith(gatherND(cube, i64({2, 1}, {0, 0}), 2), "batch_dims 2 is out of range"));
  EXPECT_TRUE(failsWith(gatherND(cube, f32({1, 1}, {0}), 0), "integer type but got f32"));
}

TEST(ScatterNDTest, OnnxExamplesAndReductions) {
  HostTensor data = i64({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor indices = i64({4, 1}, {4, 3, 1, 7});
  HostTensor updates = i64({4}, {9, 10, 11, 12});
  EXPECT_TRUE(isInts(scatterND(data, indices, updates, ScatterReduction::None), T::I64, {8},
                     {1, 11, 3, 10, 9, 6, 7, 12}));
  // Repeated tuples: reductions combine in order; None keeps the last.
  HostTensor twice = i64({3, 1}, {0, -8, 2});
  HostTensor values = i64({3}, {5, 7, -2});
  auto run = [&](ScatterReduction r) { return scatterND(data, twice, values, r); };
  EXPECT_TRUE(isInts(run(ScatterReduction::None), T::I64, {8}, {7, 2, -2, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Add), T::I64, {8}, {13, 2, 1, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Mul), T::I64, {8}, {35, 2, -6, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Max), T::I64, {8}, {7, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(isInts(run(ScatterReduction::Min), T::I64, {8}, {1, 2, -2, 4, 5, 6, 7, 8}));
  // Slices: rows of a matrix.
  HostTensor matrix = f32({3, 2}, {0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(isFloats(scatterND(matrix, i64({2, 1}, {2, 0}), f32({2, 2}, {1, 2, 3, 4}),
                                 ScatterReduction::None),
                       T::F32, {3, 2}, {3, 4, 0, 0, 1, 2}));
  // A 4-D mask merged by element tuples, as transformers exports it.
  HostTensor mask = f32({1, 1, 2, 2}, {0, -9, 0, 0});
  EXPECT_TRUE(isFloats(scatterND(mask, i64({1, 4}, {0, 0, 1, -1}), f32({1}, {-9}),
                                 ScatterReduction::None),
                       T::F32, {1, 1, 2, 2}, {0, -9, 0, -9}));
  // An empty tuple names the whole tensor.
  EXPECT_TRUE(isInts(scatterND(i32({2}, {1, 2}), i64({2, 0}, {}), i32({2, 2}, {3, 4, 5, 6}),
                               ScatterReduction::Add),
                     T::I32, {2}, {9, 12}));
}

TEST(ScatterNDTest, RejectsBadOperands) {
  HostTensor data = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_TRUE(failsWith(scatterND(data, i64({1, 1}, {2}), f32({1, 3}, {1, 1, 1}),
                                  ScatterReduction::None),
                        "scatter_nd index 2 is out of range for dim 0 of size 2"));
  EXPECT_TRUE(failsWith(scatterND(data, i64({1, 1}, {0}), f32({1, 2}, {1, 1}),
                                  ScatterReduction::None),
                        "updates [1,2] do not have the shape [1,3]"));
  EXPECT_TRUE(failsWith(scatterND(data, i64({1, 3}, {0, 0, 0}), f32({1}, {1}),
                                  ScatterReduction::None),
                        "index tuples have 3 entries; expected at most 2"));
  EXPECT_TRUE(failsWith(scatterND(data, i64({1, 1}, {0}), i32({1, 3}, {1, 1, 1}),
                                  ScatterReduction::None),
                        "same element type"));
  EXPECT_TRUE(failsWith(scatterND(bools({2}, {0, 1}), i64({1, 1}, {0}), bools({1}, {1}),
                                  ScatterReduction::Add),
                        "reductions need integer or float data, not bool"));
}

} // namespace
} // namespace shardc::constfold::test
