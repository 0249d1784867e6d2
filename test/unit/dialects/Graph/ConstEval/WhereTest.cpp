//===- WhereTest.cpp - ONNX Where -----------------------------------------===//

#include "TestUtil.h"

namespace shardc::constfold::test {
namespace {

TEST(WhereTest, SelectsElementwise) {
  EXPECT_TRUE(isInts(where(bools({3}, {1, 0, 1}), i32({3}, {1, 2, 3}), i32({3}, {-1, -2, -3})),
                     T::I32, {3}, {1, -2, 3}));
  EXPECT_TRUE(isFloats(where(bools({2}, {0, 1}), f32({2}, {1, 2}), f32({2}, {3, 4})),
                       T::F32, {2}, {3, 2}));
}

TEST(WhereTest, BroadcastsAllThree) {
  // cond [2,1], x [3], y scalar -> [2,3]
  EXPECT_TRUE(isInts(where(bools({2, 1}, {1, 0}), i64({3}, {1, 2, 3}), i64({}, {0})),
                     T::I64, {2, 3}, {1, 2, 3, 0, 0, 0}));
  // Only the condition carries the result shape.
  EXPECT_TRUE(isInts(where(bools({2, 2}, {1, 0, 0, 1}), i64({}, {7}), i64({}, {9})),
                     T::I64, {2, 2}, {7, 9, 9, 7}));
}

TEST(WhereTest, RejectsBadInput) {
  EXPECT_TRUE(failsWith(where(i32({1}, {1}), i32({1}, {1}), i32({1}, {1})),
                        "where needs a bool condition but got i32"));
  EXPECT_TRUE(failsWith(where(bools({1}, {1}), i32({1}, {1}), i64({1}, {1})),
                        "where needs operands of the same element type but got i32 and i64"));
  EXPECT_TRUE(failsWith(where(bools({2}, {1, 0}), i32({3}, {1, 2, 3}), i32({3}, {1, 2, 3})),
                        "condition [2] and values [3] are not broadcast-compatible"));
  EXPECT_TRUE(failsWith(where(bools({1}, {1}), i32({2}, {1, 2}), i32({3}, {1, 2, 3})),
                        "not broadcast-compatible"));
}

} // namespace
} // namespace shardc::constfold::test
