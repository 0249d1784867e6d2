//===- MatMulTest.cpp - numpy/ONNX MatMul ---------------------------------===//

#include "TestUtil.h"

namespace shardc::constfold::test {
namespace {

const HostTensor kA = i32({2, 3}, {1, 2, 3, 4, 5, 6});
const HostTensor kB = i32({3, 2}, {7, 8, 9, 10, 11, 12});

TEST(MatMulTest, Matrices) {
  EXPECT_TRUE(isInts(matmul(kA, kB), T::I32, {2, 2}, {58, 64, 139, 154}));
  EXPECT_TRUE(isFloats(matmul(f32({1, 2}, {0.5, 2}), f32({2, 1}, {4, 0.25})), T::F32, {1, 1},
                       {2.5}));
}

TEST(MatMulTest, OneDimensionalOperands) {
  HostTensor v = i32({3}, {1, 2, 3});
  EXPECT_TRUE(isInts(matmul(v, i32({3}, {4, 5, 6})), T::I32, {}, {32}));
  EXPECT_TRUE(isInts(matmul(v, kB), T::I32, {2}, {58, 64}));
  EXPECT_TRUE(isInts(matmul(kA, i32({3}, {1, 1, 1})), T::I32, {2}, {6, 15}));
}

// Three 2x2 matrices 0..11.
HostTensor stack() { return i32({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}); }

TEST(MatMulTest, BatchBroadcasting) {
  // [2,1,2,2] x [3,2,2] -> [2,3,2,2]: the identity, then a row swap, times each matrix.
  HostTensor lhs = i32({2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
  EXPECT_TRUE(isInts(matmul(lhs, stack()), T::I32, {2, 3, 2, 2},
                     {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
                      2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9}));
  // A plain matrix broadcasts against the batch.
  EXPECT_TRUE(isInts(matmul(stack(), i32({2, 2}, {1, 0, 0, 1})), T::I32, {3, 2, 2},
                     {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
}

TEST(MatMulTest, VectorsAgainstABatch) {
  // [2] x [3,2,2] -> [3,2]: column sums of each matrix.
  EXPECT_TRUE(isInts(matmul(i32({2}, {1, 1}), stack()), T::I32, {3, 2}, {2, 4, 10, 12, 18, 20}));
  // [3,2,2] x [2] -> [3,2]: first column of each matrix.
  EXPECT_TRUE(isInts(matmul(stack(), i32({2}, {1, 0})), T::I32, {3, 2}, {0, 2, 4, 6, 8, 10}));
}

TEST(MatMulTest, IntegersWrapAndFloatsAccumulateInDouble) {
  EXPECT_TRUE(isInts(matmul(i32({1, 2}, {1 << 30, 1 << 30}), i32({2, 1}, {2, 1})), T::I32,
                     {1, 1}, {-(int64_t(1) << 30)}));
  // In f32 arithmetic 1e8 + 1 - 1e8 would be 0.
  EXPECT_TRUE(isFloats(matmul(f32({3}, {1e8, 1, -1e8}), f32({3}, {1, 1, 1})), T::F32, {}, {1}));
  EXPECT_TRUE(isFloats(matmul(floats(T::BF16, {2}, {256, 1}), floats(T::BF16, {2}, {1, 1})),
                       T::BF16, {}, {256}));
}

TEST(MatMulTest, EmptyDims) {
  EXPECT_TRUE(isInts(matmul(i32({2, 0}, {}), i32({0, 3}, {})), T::I32, {2, 3},
                     {0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(isInts(matmul(i32({0, 2, 2}, {}), i32({2, 2}, {1, 0, 0, 1})), T::I32, {0, 2, 2},
                     {}));
  // A huge K with an empty result does no work.
  EXPECT_TRUE(isInts(matmul(i32({0, int64_t(1) << 40}, {}), i32({int64_t(1) << 40, 0}, {})),
                     T::I32, {0, 0}, {}));
}

TEST(MatMulTest, RejectsBadInput) {
  EXPECT_TRUE(failsWith(matmul(kA, kA), "matmul contracting dims differ: [2,3] and [2,3]"));
  EXPECT_TRUE(failsWith(matmul(i32({}, {1}), kA), "rank >= 1"));
  EXPECT_TRUE(failsWith(matmul(kA, i64({3, 1}, {1, 1, 1})), "same element type"));
  EXPECT_TRUE(failsWith(matmul(bools({1}, {1}), bools({1}, {1})), "but got bool"));
  EXPECT_TRUE(failsWith(matmul(i32({2, 2, 2}, {0, 0, 0, 0, 0, 0, 0, 0}), stack()),
                        "matmul batch dims: shapes [2] and [3] are not broadcast-compatible"));
  EXPECT_TRUE(failsWith(matmul(f32({2048, 2048}, std::vector<double>(2048 * 2048, 1)),
                               f32({2048, 2048}, std::vector<double>(2048 * 2048, 1))),
                        "multiply-adds, more than the folding limit"));
}

} // namespace
} // namespace shardc::constfold::test
