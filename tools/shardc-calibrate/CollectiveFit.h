//===- CollectiveFit.h - the cost model's link figures from measured times -*- C++ -*-===//
//
// The compiler prices a collective over n ranks by ring algorithms
// (passes/Sharding/CostModel.cpp, collectiveSeconds):
//   all-reduce of B bytes  launch + 2(n-1) (latency + B / (n bandwidth))
//   all-gather of B bytes  launch + (n-1) (latency + B / (n bandwidth))
// (B the whole gathered buffer). Three measurements pin the three figures:
// all-reduces of a small and a large buffer give the bandwidth (the slope)
// and launch + 2(n-1) latency (the intercept); a small all-gather gives
// launch + (n-1) latency. The model takes a double binary tree instead when
// that is cheaper, which for n >= 4 happens on small all-reduces: there it
// prices below what the ring fit measured.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDC_CALIBRATE_COLLECTIVEFIT_H
#define SHARDC_TOOLS_SHARDC_CALIBRATE_COLLECTIVEFIT_H

#include <string>

namespace shardc::calibrate {

/// One timed collective: its buffer's bytes (as the model counts them) and
/// median seconds.
struct Timed {
  double bytes, seconds;
};

struct LinkFit {
  double latencySeconds = 0, bytesPerSecond = 0, launchSeconds = 0;
  /// Why the figures do not fit (empty when they do): the large all-reduce
  /// no slower than the small one, for instance.
  std::string error;
  /// Which figures came out at or below zero (timer noise on a machine
  /// whose collectives cost almost nothing to start) and were raised to
  /// kFloorSeconds, the device file accepting positive numbers only.
  std::string clamped;
};

inline constexpr double kFloorSeconds = 1e-8;

/// The ring figures of `ranks` ranks from two all-reduces and one all-gather.
LinkFit fitRing(int ranks, Timed smallAllReduce, Timed largeAllReduce, Timed smallAllGather);

} // namespace shardc::calibrate

#endif // SHARDC_TOOLS_SHARDC_CALIBRATE_COLLECTIVEFIT_H
