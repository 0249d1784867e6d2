//===- ArenaPlanner.h - offsets for buffers with live ranges ----*- C++ -*-===//
//
// The memory plan's algorithm, free of MLIR so it is unit-tested directly:
// given each buffer's size and live range [first, last] over the steps,
// assign arena offsets such that buffers live at the same step never overlap.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_LOWERING_ARENAPLANNER_H
#define SHARDC_PASSES_LOWERING_ARENAPLANNER_H

#include <cstdint>
#include <vector>

namespace shardc::lowering {

struct BufferLife {
  int64_t size;  ///< bytes
  int64_t first; ///< first step that writes or reads it
  int64_t last;  ///< last step that reads it (inclusive)
};

struct ArenaPlan {
  std::vector<int64_t> offsets; ///< one per buffer, in input order
  int64_t peakBytes = 0;
};

/// Every buffer's offset is a multiple of this (vector loads, cache lines).
constexpr int64_t kArenaAlignment = 64;

/// Greedy by size: the largest buffer first, each at the lowest aligned
/// offset free of every placed buffer whose live range intersects its own.
ArenaPlan planArena(const std::vector<BufferLife> &buffers);

/// True when no two buffers with intersecting live ranges overlap in memory
/// and all lie in [0, peakBytes): the plan's invariant, checked by tests and
/// by the pass after planning.
bool isValidPlan(const std::vector<BufferLife> &buffers, const ArenaPlan &plan);

} // namespace shardc::lowering

#endif
