//===- ArenaPlanner.cpp - offsets for buffers with live ranges ------------===//
#include "passes/Lowering/ArenaPlanner.h"

#include <algorithm>
#include <numeric>

namespace shardc::lowering {
namespace {

int64_t alignUp(int64_t value) {
  return (value + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

bool livesOverlap(const BufferLife &a, const BufferLife &b) {
  return a.first <= b.last && b.first <= a.last;
}

} // namespace

ArenaPlan planArena(const std::vector<BufferLife> &buffers) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start so the plan is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferLife &buffer = buffers[index];
    // The busy intervals of placed buffers that are alive at the same time,
    // by offset; take the first gap that fits.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t other : placed)
      if (livesOverlap(buffer, buffers[other]))
        busy.emplace_back(plan.offsets[other], plan.offsets[other] + buffers[other].size);
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buffer.size <= begin)
        break;
      offset = std::max(offset, alignUp(end));
    }
    plan.offsets[index] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + buffer.size);
    placed.push_back(index);
  }
  plan.peakBytes = alignUp(plan.peakBytes);
  return plan;
}

bool isValidPlan(const std::vector<BufferLife> &buffers, const ArenaPlan &plan) {
  if (plan.offsets.size() != buffers.size())
    return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    int64_t begin = plan.offsets[i], end = begin + buffers[i].size;
    if (begin < 0 || begin % kArenaAlignment != 0 || end > plan.peakBytes)
      return false;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      int64_t otherBegin = plan.offsets[j], otherEnd = otherBegin + buffers[j].size;
      bool memoryOverlaps = begin < otherEnd && otherBegin < end;
      if (memoryOverlaps && livesOverlap(buffers[i], buffers[j]) && buffers[i].size > 0 &&
          buffers[j].size > 0)
        return false;
    }
  }
  return true;
}

} // namespace shardc::lowering
