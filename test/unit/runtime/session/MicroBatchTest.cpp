//===- MicroBatchTest.cpp - cutting and joining micro-batches ---------------===//
#include "test/unit/runtime/session/Iota.h"
#include "runtime/session/MicroBatch.h"

#include <gtest/gtest.h>

#include <cstring>

namespace shardc::rt {
namespace {

TEST(MicroBatch, SlicesAndJoinsAlongAnInnerDimension) {
  HostTensor whole = iota({2, 6, 3});
  std::vector<HostTensor> pieces;
  for (int m = 0; m < 3; ++m)
    pieces.push_back(sliceAlong(whole, 1, m, 3));
  EXPECT_EQ(pieces[1].shape, (Shape{2, 2, 3}));
  const auto *second = reinterpret_cast<const float *>(pieces[1].bytes.data());
  // Micro-batch 1 of dim 1 holds rows 2 and 3 of each outer block.
  EXPECT_EQ(second[0], 6.0f);
  EXPECT_EQ(second[6], 24.0f);
  HostTensor joined = joinAlong(pieces, 1);
  EXPECT_EQ(joined.shape, whole.shape);
  EXPECT_EQ(std::memcmp(joined.bytes.data(), whole.bytes.data(), whole.bytes.size()), 0);
}

} // namespace
} // namespace shardc::rt
