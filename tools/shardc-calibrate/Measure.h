//===- Measure.h - what one rank of this machine achieves -------*- C++ -*-===//
//
// Each rank runs these at the same time as the others (they share the
// machine the way the ranks of a run do), separated by barriers; the
// figures are medians over `repeats` after a warm-up.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDC_CALIBRATE_MEASURE_H
#define SHARDC_TOOLS_SHARDC_CALIBRATE_MEASURE_H

#include "runtime/core/Communicator.h"
#include "tools/shardc-calibrate/CollectiveFit.h"

namespace shardc::calibrate {

struct RankFigures {
  /// fp32 FLOP/s of the CPU linear kernel (packed weight) at GPT-2-small's
  /// MLP shape, [128, 768] x [768, 3072]: what a transformer's GEMMs get.
  double gemmFlops = 0;
  /// Bytes read and written per second by memcpy of 64 MiB.
  double memoryBandwidth = 0;
  /// All-reduces of 4 KiB and of `largeBytes`, an all-gather of 4 KiB.
  Timed smallAllReduce, largeAllReduce, smallAllGather;
};

/// Measures this rank; every rank of `world` must call it with the same
/// arguments. Kernel threads are the process setting (cpu::setNumThreads).
rt::StatusOr<RankFigures> measureRank(rt::Communicator &world, size_t largeBytes, int repeats);

} // namespace shardc::calibrate

#endif // SHARDC_TOOLS_SHARDC_CALIBRATE_MEASURE_H
