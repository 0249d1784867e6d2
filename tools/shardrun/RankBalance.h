//===- RankBalance.h - where each rank's time goes (--profile) --*- C++ -*-===//
//
// A mesh runs as fast as its slowest rank: a rank that finishes its share
// early waits inside the next collective for the others. --profile's step
// table is the output rank's; with several ranks it is followed by one line
// per rank: its steps' time, split into compute and collectives, and the
// collectives' time spent waiting for the peers. The waiting is estimated
// per collective step as the rank's time in it minus the least time any
// rank spent in it, both summed over the timed runs (the last to arrive
// waits least), so it is given only when every rank ran the same steps (not
// for a pipeline's stages). "Collectives" are the steps bound to a group of
// ranks (all_slice too, which only picks the rank's block).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_RANKBALANCE_H
#define SHARDC_TOOLS_SHARDRUN_RANKBALANCE_H

#include "runtime/core/Communicator.h"
#include "runtime/core/Executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::shardrun {

/// One rank's steps, summed over the timed runs.
struct RankTimes {
  double compute = 0;     ///< seconds in steps that are not collectives
  double collectives = 0; ///< seconds in collective steps
  /// The timed runs' seconds: what the steps leave of it the rank spent
  /// idle (a pipeline rank waiting for its peers, its transfers' copies).
  double wall = 0;
  /// The kernels in program order, hashed: equal when two ranks ran the same steps.
  uint64_t signature = 0;
  std::vector<double> collectiveSteps; ///< seconds in each collective step, in order
};

/// A rank's times from its step profile and its timed runs' seconds.
RankTimes rankTimesOf(const std::vector<rt::StepProfile> &profile,
                      const std::vector<double> &runSeconds);

/// Every rank's times, on every rank (collective over `world`, whose rank i
/// is rank i of the artifact; host memory: MPI or in-process).
rt::StatusOr<std::vector<RankTimes>> gatherRankTimes(const RankTimes &mine,
                                                     rt::Communicator &world);

/// The per-rank lines, times per timed run (`iters` of them).
std::string rankBalanceTable(const std::vector<RankTimes> &ranks, int iters);

} // namespace shardc::shardrun

#endif
