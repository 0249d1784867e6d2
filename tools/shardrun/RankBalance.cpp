//===- RankBalance.cpp - where each rank's time goes (--profile) ----------===//
#include "tools/shardrun/RankBalance.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace shardc::shardrun {
namespace {

/// FNV-1a over the kernel names, each ended by a zero byte.
uint64_t kernelSignature(const std::vector<rt::StepProfile> &profile) {
  uint64_t hash = 14695981039346656037ull;
  for (const rt::StepProfile &step : profile)
    for (size_t i = 0; i <= step.kernel.size(); ++i) {
      hash ^= static_cast<unsigned char>(i < step.kernel.size() ? step.kernel[i] : '\0');
      hash *= 1099511628211ull;
    }
  return hash;
}

/// The fixed part every rank sends first: what the second round's size
/// depends on.
struct Header {
  double compute, collectives, wall;
  uint64_t signature, collectiveSteps;
};

} // namespace

RankTimes rankTimesOf(const std::vector<rt::StepProfile> &profile,
                      const std::vector<double> &runSeconds) {
  RankTimes times;
  times.signature = kernelSignature(profile);
  for (double seconds : runSeconds)
    times.wall += seconds;
  for (const rt::StepProfile &step : profile) {
    if (step.collective) {
      times.collectives += step.seconds;
      times.collectiveSteps.push_back(step.seconds);
    } else {
      times.compute += step.seconds;
    }
  }
  return times;
}

rt::StatusOr<std::vector<RankTimes>> gatherRankTimes(const RankTimes &mine,
                                                     rt::Communicator &world) {
  const size_t ranks = static_cast<size_t>(world.size());
  Header header{mine.compute, mine.collectives, mine.wall, mine.signature,
                mine.collectiveSteps.size()};
  std::vector<Header> headers(ranks);
  if (rt::Status status = world.allGather(&header, headers.data(), sizeof(Header)); !status)
    return status;
  std::vector<RankTimes> all(ranks);
  bool sameSteps = true;
  for (size_t rank = 0; rank < ranks; ++rank) {
    all[rank] = {headers[rank].compute, headers[rank].collectives, headers[rank].wall,
                 headers[rank].signature, {}};
    sameSteps = sameSteps && headers[rank].signature == header.signature &&
                headers[rank].collectiveSteps == header.collectiveSteps;
  }
  // Every rank took the same decision from the same headers.
  if (!sameSteps || mine.collectiveSteps.empty())
    return all;
  const size_t count = mine.collectiveSteps.size();
  std::vector<double> steps(ranks * count);
  if (rt::Status status = world.allGather(mine.collectiveSteps.data(), steps.data(),
                                          count * sizeof(double));
      !status)
    return status;
  for (size_t rank = 0; rank < ranks; ++rank)
    all[rank].collectiveSteps.assign(steps.begin() + rank * count,
                                     steps.begin() + (rank + 1) * count);
  return all;
}

std::string rankBalanceTable(const std::vector<RankTimes> &ranks, int iters) {
  bool sameSteps = !ranks.empty();
  for (const RankTimes &rank : ranks)
    sameSteps = sameSteps && rank.signature == ranks.front().signature &&
                rank.collectiveSteps.size() == ranks.front().collectiveSteps.size();
  // The least time any rank spent in each collective step.
  std::vector<double> least;
  if (sameSteps) {
    least.assign(ranks.front().collectiveSteps.size(), std::numeric_limits<double>::infinity());
    for (const RankTimes &rank : ranks)
      for (size_t i = 0; i < least.size(); ++i)
        least[i] = std::min(least[i], rank.collectiveSteps[i]);
  }
  const double perIter = 1e3 / std::max(iters, 1);
  std::string table;
  char line[160];
  table += "per rank, ms/iter: steps = compute + collectives; waiting: the collectives' time "
           "spent waiting for peers; idle: the share of the run outside any step (a pipeline "
           "rank's bubble)\n";
  std::snprintf(line, sizeof line, "%-5s %12s %12s %12s %12s %8s\n", "rank", "steps", "compute",
                "collectives", "waiting", "idle");
  table += line;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankTimes &rank = ranks[r];
    std::string waiting = "-";
    if (sameSteps) {
      double waited = 0;
      for (size_t i = 0; i < least.size(); ++i)
        waited += rank.collectiveSteps[i] - least[i];
      char text[32];
      std::snprintf(text, sizeof text, "%.4f", waited * perIter);
      waiting = text;
    }
    const double busy = rank.compute + rank.collectives;
    std::snprintf(line, sizeof line, "%-5zu %12.4f %12.4f %12.4f %12s %7.1f%%\n", r,
                  busy * perIter, rank.compute * perIter, rank.collectives * perIter,
                  waiting.c_str(), rank.wall > 0 ? 100 * std::max(0.0, 1 - busy / rank.wall) : 0.0);
    table += line;
  }
  return table;
}

} // namespace shardc::shardrun
