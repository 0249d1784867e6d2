//===- SharedPackedWeights.h - one packed copy of a weight block per process -*- C++ -*-===//
//
// PackedLinear reorders a constant weight into the layout its oneDNN
// primitive reads. Ranks run as threads of one process share their weight
// file's copy where their blocks are equal (data parallelism, replicated
// kv heads; Session::loadRanks), and so read the same bytes at the same
// address; each packing them again would hold the packed weights once per
// rank (GPT-2 at dp=2 in one process: 1548 MB against 897 for one rank) and
// stream every copy through the shared caches. Blocks are shared by what
// they are made from: the stored weight's address and orientation, the
// columns taken, and the layout packed into. That identity is sound because
// a constant weight's bytes (a read-only copy, io::FileCopy) do not change while a
// step that reads them lives: they may leave memory once packed, but come
// back only as they were loaded (io::SafeTensorsFile::hold). A step that
// finds its block packed does not hold the stored weight at all, so a rank
// thread preparing after another reads nothing again.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_SHAREDPACKEDWEIGHTS_H
#define SHARDC_RUNTIME_CPU_SHAREDPACKEDWEIGHTS_H

#include "runtime/core/Status.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <functional>
#include <memory>

namespace shardc::rt::cpu {

/// Columns [begin, begin + width) of a constant weight that holds n columns
/// of k rows, stored [k, n] at `weight`, or [n, k] where `transposed`.
struct WeightBlock {
  const float *weight = nullptr;
  bool transposed = false;
  int64_t k = 0, n = 0, begin = 0, width = 0;
};

/// The block packed into `layout`: the copy another step of this process
/// holds, or else the one `pack` makes (called once however many threads
/// ask at the same time), or pack's error. The copy lives while a holder
/// does.
StatusOr<std::shared_ptr<const dnnl::memory>>
sharedPackedBlock(const WeightBlock &block, const dnnl::memory::desc &layout,
                  const std::function<StatusOr<dnnl::memory>()> &pack);

/// How many packed blocks are alive in this process, their bytes, and the
/// most bytes alive at once (cpu::peakPackedWeightBytes(), CpuBackend.h).
struct PackedBlocks {
  size_t count = 0, bytes = 0, peakBytes = 0;
};
PackedBlocks livePackedBlocks();

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_SHAREDPACKEDWEIGHTS_H
