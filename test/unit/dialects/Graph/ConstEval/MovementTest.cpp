//===- MovementTest.cpp - Reshape, Transpose, Slice, Concat, Split, Expand ===//

#include "TestUtil.h"

#include <limits>
#include <numeric>

namespace shardc::constfold::test {
namespace {

std::vector<int64_t> iota(int64_t count, int64_t first = 0) {
  std::vector<int64_t> values(static_cast<size_t>(count));
  std::iota(values.begin(), values.end(), first);
  return values;
}

TEST(ReshapeTest, KeepsRowMajorOrder) {
  HostTensor x = i32({2, 3}, iota(6));
  EXPECT_TRUE(isInts(reshape(x, {3, 2}), T::I32, {3, 2}, iota(6)));
  EXPECT_TRUE(isInts(reshape(x, {6}), T::I32, {6}, iota(6)));
  EXPECT_TRUE(isInts(reshape(i32({1, 1}, {7}), {}), T::I32, {}, {7}));
  EXPECT_TRUE(isInts(reshape(i32({0, 3}, {}), {3, 0, 5}), T::I32, {3, 0, 5}, {}));
}

TEST(ReshapeTest, RejectsBadShapes) {
  HostTensor x = i32({2, 3}, iota(6));
  EXPECT_TRUE(failsWith(reshape(x, {4, 2}),
                        "cannot reshape [2,3] (6 elements) to [4,2] (8 elements)"));
  EXPECT_TRUE(failsWith(reshape(x, {-1, 3}), "must be resolved and non-negative"));
}

TEST(TransposeTest, Matrix) {
  EXPECT_TRUE(isInts(transpose(i32({2, 3}, iota(6)), {1, 0}), T::I32, {3, 2},
                     {0, 3, 1, 4, 2, 5}));
}

TEST(TransposeTest, Rank3) {
  // out[i][j][k] = in[j][k][i] for perm {2, 0, 1}.
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 3; ++k)
        expected.push_back(j * 12 + k * 4 + i);
  EXPECT_TRUE(isInts(transpose(i64({2, 3, 4}, iota(24)), {2, 0, 1}), T::I64, {4, 2, 3},
                     expected));
  EXPECT_TRUE(isFloats(transpose(f32({1, 2}, {0.5, 1.5}), {1, 0}), T::F32, {2, 1},
                       {0.5, 1.5}));
  EXPECT_TRUE(isInts(transpose(i32({}, {3}), {}), T::I32, {}, {3}));
}

TEST(TransposeTest, RejectsBadPermutations) {
  HostTensor x = i32({2, 3}, iota(6));
  EXPECT_TRUE(failsWith(transpose(x, {0, 0}), "not a permutation"));
  EXPECT_TRUE(failsWith(transpose(x, {0}), "not a permutation"));
  EXPECT_TRUE(failsWith(transpose(x, {0, 2}), "not a permutation"));
  EXPECT_TRUE(failsWith(transpose(x, {-1, 0}), "not a permutation"));
}

TEST(SliceTest, PositiveSteps) {
  HostTensor x = i64({10}, iota(10));
  EXPECT_TRUE(isInts(slice(x, {1}, {8}, {3}), T::I64, {3}, {1, 4, 7}));
  EXPECT_TRUE(isInts(slice(x, {0}, {10}, {1}), T::I64, {10}, iota(10)));
  EXPECT_TRUE(isInts(slice(x, {5}, {5}, {1}), T::I64, {0}, {}));
  EXPECT_TRUE(isInts(slice(x, {7}, {2}, {1}), T::I64, {0}, {}));
  EXPECT_TRUE(isInts(slice(x, {10}, {10}, {1}), T::I64, {0}, {}));
  // A huge step takes just the start.
  EXPECT_TRUE(isInts(slice(x, {3}, {10}, {std::numeric_limits<int64_t>::max()}), T::I64,
                     {1}, {3}));
}

TEST(SliceTest, NegativeSteps) {
  HostTensor x = i64({10}, iota(10));
  EXPECT_TRUE(isInts(slice(x, {8}, {1}, {-3}), T::I64, {3}, {8, 5, 2}));
  // end = -1 means "through index 0".
  EXPECT_TRUE(isInts(slice(x, {9}, {-1}, {-1}), T::I64, {10},
                     {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(isInts(slice(x, {9}, {-1}, {-4}), T::I64, {3}, {9, 5, 1}));
  EXPECT_TRUE(isInts(slice(x, {2}, {7}, {-1}), T::I64, {0}, {}));
  EXPECT_TRUE(isInts(slice(x, {9}, {-1}, {std::numeric_limits<int64_t>::min()}), T::I64,
                     {1}, {9}));
}

TEST(SliceTest, SeveralDims) {
  // [[0,1,2,3],[4,5,6,7],[8,9,10,11]]: rows reversed, every other column from the end.
  EXPECT_TRUE(isInts(slice(i32({3, 4}, iota(12)), {2, 3}, {-1, -1}, {-1, -2}), T::I32,
                     {3, 2}, {11, 9, 7, 5, 3, 1}));
  EXPECT_TRUE(isFloats(slice(f32({2, 2}, {1, 2, 3, 4}), {0, 1}, {2, 2}, {1, 1}), T::F32,
                       {2, 1}, {2, 4}));
  EXPECT_TRUE(isInts(slice(bools({3}, {1, 0, 1}), {1}, {3}, {1}), T::Bool, {2}, {0, 1}));
}

TEST(SliceTest, RejectsBadInput) {
  HostTensor x = i64({10}, iota(10));
  EXPECT_TRUE(failsWith(slice(x, {0, 0}, {1, 1}, {1, 1}), "one start, end and step per dim"));
  EXPECT_TRUE(failsWith(slice(x, {0}, {5}, {0}), "step 0"));
  EXPECT_TRUE(failsWith(slice(x, {0}, {20}, {1}), "expected clamped values in [-1, 10]"));
  EXPECT_TRUE(failsWith(slice(x, {-1}, {5}, {1}), "reads outside the dim"));
  EXPECT_TRUE(failsWith(slice(x, {10}, {2}, {-1}), "reads outside the dim"));
}

TEST(ConcatTest, AlongEachAxis) {
  HostTensor a = i32({2, 1}, {1, 2}), b = i32({2, 2}, {3, 4, 5, 6});
  EXPECT_TRUE(isInts(concat({&a, &b}, 1), T::I32, {2, 3}, {1, 3, 4, 2, 5, 6}));
  HostTensor c = i32({1, 2}, {7, 8});
  EXPECT_TRUE(isInts(concat({&b, &c}, 0), T::I32, {3, 2}, {3, 4, 5, 6, 7, 8}));
  HostTensor empty = i32({2, 0}, {});
  EXPECT_TRUE(isInts(concat({&empty, &a, &empty}, 1), T::I32, {2, 1}, {1, 2}));
  HostTensor f = f32({2}, {0.5, 1.5});
  EXPECT_TRUE(isFloats(concat({&f, &f}, 0), T::F32, {4}, {0.5, 1.5, 0.5, 1.5}));
}

TEST(ConcatTest, RejectsBadInput) {
  HostTensor a = i32({2, 1}, {1, 2}), b = i32({3, 1}, {3, 4, 5}), s = i32({}, {1});
  HostTensor wrongType = i64({2, 1}, {1, 2});
  EXPECT_TRUE(failsWith(concat({&a, &b}, 1), "needs equal other dims but got [2,1] and [3,1]"));
  EXPECT_TRUE(failsWith(concat({&a, &wrongType}, 0), "same element type"));
  EXPECT_TRUE(failsWith(concat({&a, &a}, 2), "axis 2 is out of range for rank 2"));
  EXPECT_TRUE(failsWith(concat({&a, &a}, -1), "axis -1 is out of range"));
  EXPECT_TRUE(failsWith(concat({&s, &s}, 0), "out of range for rank 0"));
  EXPECT_TRUE(failsWith(concat({}, 0), "at least one input"));
  EXPECT_TRUE(failsWith(concat({&a, nullptr}, 0), "concat input 1 is null"));
}

TEST(SplitTest, Pieces) {
  StatusOr<std::vector<HostTensor>> pieces = split(i32({2, 5}, iota(10)), 1, {2, 0, 3});
  ASSERT_TRUE(pieces) << pieces.message();
  ASSERT_EQ(pieces->size(), 3u);
  EXPECT_TRUE(isInts((*pieces)[0], T::I32, {2, 2}, {0, 1, 5, 6}));
  EXPECT_TRUE(isInts((*pieces)[1], T::I32, {2, 0}, {}));
  EXPECT_TRUE(isInts((*pieces)[2], T::I32, {2, 3}, {2, 3, 4, 7, 8, 9}));

  StatusOr<std::vector<HostTensor>> rows = split(f32({3}, {1, 2, 3}), 0, {1, 2});
  ASSERT_TRUE(rows) << rows.message();
  EXPECT_TRUE(isFloats((*rows)[1], T::F32, {2}, {2, 3}));
}

TEST(SplitTest, RejectsBadSizes) {
  HostTensor x = i32({2, 5}, iota(10));
  EXPECT_TRUE(failsWith(split(x, 1, {2, 2}), "split sizes [2,2] do not add up to 5"));
  EXPECT_TRUE(failsWith(split(x, 1, {6, -1}), "do not add up"));
  EXPECT_TRUE(failsWith(split(x, 1, {std::numeric_limits<int64_t>::max(), 2}), "do not add up"));
  EXPECT_TRUE(failsWith(split(x, 2, {1}), "axis 2 is out of range"));
}

TEST(ExpandTest, BroadcastsBothWays) {
  // [3,1] expanded by [2,1,4] -> [2,3,4]
  std::vector<int64_t> expected;
  for (int b = 0; b < 2; ++b)
    for (int64_t v : {1, 2, 3})
      for (int k = 0; k < 4; ++k)
        expected.push_back(v);
  EXPECT_TRUE(isInts(expand(i32({3, 1}, {1, 2, 3}), {2, 1, 4}), T::I32, {2, 3, 4}, expected));
  // A 1 in the target keeps the input's dim (ONNX, not numpy.broadcast_to).
  EXPECT_TRUE(isInts(expand(i32({3}, {1, 2, 3}), {1}), T::I32, {3}, {1, 2, 3}));
  EXPECT_TRUE(isFloats(expand(f32({}, {0.5}), {2, 2}), T::F32, {2, 2}, {0.5, 0.5, 0.5, 0.5}));
  EXPECT_TRUE(isInts(expand(i32({1}, {9}), {0}), T::I32, {0}, {}));
}

TEST(ExpandTest, RejectsBadShapes) {
  EXPECT_TRUE(failsWith(expand(i32({3}, {1, 2, 3}), {2}),
                        "cannot expand: shapes [3] and [2] are not broadcast-compatible"));
  EXPECT_TRUE(failsWith(expand(i32({1}, {1}), {-2}), "not broadcast-compatible"));
  EXPECT_TRUE(failsWith(expand(i32({1}, {1}), {int64_t(1) << 20, int64_t(1) << 20}),
                        "folding limit"));
}

} // namespace
} // namespace shardc::constfold::test
