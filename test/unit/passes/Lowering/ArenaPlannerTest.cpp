//===- ArenaPlannerTest.cpp - the memory plan never overlaps live buffers -===//
#include "passes/Lowering/ArenaPlanner.h"

#include <gtest/gtest.h>

#include <random>

using shardc::lowering::ArenaPlan;
using shardc::lowering::BufferLife;
using shardc::lowering::isValidPlan;
using shardc::lowering::kArenaAlignment;
using shardc::lowering::planArena;

namespace {

/// Brute force: for every step, the bytes of the buffers live at it are disjoint.
bool noLiveOverlap(const std::vector<BufferLife> &buffers, const ArenaPlan &plan) {
  int64_t lastStep = 0;
  for (const BufferLife &b : buffers)
    lastStep = std::max(lastStep, b.last);
  for (int64_t step = 0; step <= lastStep; ++step) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].first <= step && step <= buffers[i].last && buffers[i].size > 0)
        ranges.emplace_back(plan.offsets[i], plan.offsets[i] + buffers[i].size);
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].first < ranges[i - 1].second)
        return false;
  }
  return true;
}

TEST(ArenaPlanner, ReusesDeadBuffers) {
  // a [0,1], b [1,2], c [2,3]: c may take a's place, not b's.
  std::vector<BufferLife> buffers = {{64, 0, 1}, {64, 1, 2}, {64, 2, 3}};
  ArenaPlan plan = planArena(buffers);
  EXPECT_EQ(plan.peakBytes, 128);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[1], plan.offsets[2]);
  EXPECT_TRUE(isValidPlan(buffers, plan));
}

TEST(ArenaPlanner, AlignsEveryOffset) {
  std::vector<BufferLife> buffers = {{10, 0, 5}, {3, 0, 5}, {100, 0, 5}};
  ArenaPlan plan = planArena(buffers);
  for (int64_t offset : plan.offsets)
    EXPECT_EQ(offset % kArenaAlignment, 0);
  EXPECT_TRUE(isValidPlan(buffers, plan));
}

TEST(ArenaPlanner, RandomProgramsNeverOverlapLiveBuffers) {
  std::mt19937 random(1234);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<BufferLife> buffers;
    int count = 1 + random() % 60;
    int64_t totalBytes = 0;
    for (int i = 0; i < count; ++i) {
      int64_t first = random() % 40;
      int64_t size = 1 + random() % 5000;
      buffers.push_back({size, first, first + static_cast<int64_t>(random() % 15)});
      totalBytes += size + kArenaAlignment;
    }
    ArenaPlan plan = planArena(buffers);
    ASSERT_TRUE(noLiveOverlap(buffers, plan)) << "trial " << trial;
    ASSERT_TRUE(isValidPlan(buffers, plan)) << "trial " << trial;
    // Never worse than giving every buffer its own bytes.
    ASSERT_LE(plan.peakBytes, totalBytes);
  }
}

TEST(ArenaPlanner, ValidatorCatchesOverlap) {
  std::vector<BufferLife> buffers = {{64, 0, 2}, {64, 1, 3}};
  ArenaPlan overlapping{{0, 0}, 128};
  EXPECT_FALSE(isValidPlan(buffers, overlapping));
  ArenaPlan outside{{0, 64}, 64};
  EXPECT_FALSE(isValidPlan(buffers, outside));
}

} // namespace
