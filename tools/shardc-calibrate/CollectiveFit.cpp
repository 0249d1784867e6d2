//===- CollectiveFit.cpp - the cost model's link figures from measured times ===//
#include "tools/shardc-calibrate/CollectiveFit.h"

namespace shardc::calibrate {

LinkFit fitRing(int ranks, Timed smallAllReduce, Timed largeAllReduce, Timed smallAllGather) {
  LinkFit fit;
  if (ranks < 2) {
    fit.error = "collectives need at least 2 ranks";
    return fit;
  }
  const double n = ranks;
  const double slope = (largeAllReduce.seconds - smallAllReduce.seconds) /
                       (largeAllReduce.bytes - smallAllReduce.bytes);
  if (!(largeAllReduce.bytes > smallAllReduce.bytes) || !(slope > 0)) {
    fit.error = "the large all-reduce was no slower than the small one; time a larger buffer";
    return fit;
  }
  fit.bytesPerSecond = 2 * (n - 1) / (n * slope);
  // launch + 2(n-1) latency, and launch + (n-1) latency.
  const double reduceFixed = smallAllReduce.seconds - slope * smallAllReduce.bytes;
  const double gatherFixed =
      smallAllGather.seconds - (n - 1) / n * smallAllGather.bytes / fit.bytesPerSecond;
  fit.latencySeconds = (reduceFixed - gatherFixed) / (n - 1);
  fit.launchSeconds = gatherFixed - (n - 1) * fit.latencySeconds;
  auto floor = [&](double &seconds, const char *name) {
    if (seconds > kFloorSeconds)
      return;
    seconds = kFloorSeconds;
    fit.clamped += fit.clamped.empty() ? name : std::string(", ") + name;
  };
  floor(fit.latencySeconds, "latency");
  floor(fit.launchSeconds, "launch");
  return fit;
}

} // namespace shardc::calibrate
