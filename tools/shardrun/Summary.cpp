//===- Summary.cpp - what the output rank reports at the end --------------===//
#include "tools/shardrun/Summary.h"

#include "runtime/cpu/CpuBackend.h"
#include "runtime/io/Npz.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace shardc::shardrun {
namespace {

/// Resident set size high-water mark, from /proc (Linux).
int64_t peakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atoll(line.c_str() + 6) * 1024;
  return 0;
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", bytes / 1e6);
  return text;
}

} // namespace

/// The output rank's part at the end: the outputs and the summary. An error message,
/// or empty.
std::string finish(const Options &options, const rt::Session &session, rt::RankRun &run,
                   const std::string &how, const std::vector<RankTimes> *rankTimes) {
  const rt::ArtifactLayout &artifact = session.layout();
  const rt::DevicePlan &plan = session.device();
  if (!options.outputs.empty()) {
    std::vector<rt::io::NamedView> named;
    for (size_t i = 0; i < run.outputs.size(); ++i)
      named.push_back({session.outputs()[i].name, run.outputs[i].view()});
    if (rt::Status status = rt::io::writeNpz(options.outputs, named); !status)
      return status.message();
  }
  std::sort(run.seconds.begin(), run.seconds.end());
  double median = run.seconds[run.seconds.size() / 2];
  std::string ranks = artifact.ranks == 1 ? "1 rank" : std::to_string(artifact.ranks) + " ranks";
  if (!artifact.mesh.names.empty() && artifact.ranks > 1)
    ranks += " (mesh " + artifact.mesh.describe() + ")";
  // How the ranks talk; said of one rank too when it is NCCL, which was asked for.
  if (artifact.ranks > 1 || how.rfind("over NCCL", 0) == 0)
    ranks += " " + how;
  std::string where = plan.cuda ? " on " + plan.description
                                : ", " + std::to_string(rt::cpu::threads()) + " thread(s)" +
                                      (artifact.ranks > 1 ? " per rank" : "");
  // The CPU's packed GEMM weights are the process's, shared by its ranks.
  std::string packed =
      plan.cuda ? ""
                : ", packed weights " + megabytes(int64_t(rt::cpu::peakPackedWeightBytes()));
  std::printf("shardrun: %s%s, %.3f ms/iter (median of %d), arena %s, peak RSS %s%s\n",
              ranks.c_str(), where.c_str(), median * 1e3, options.iters,
              megabytes(run.arenaBytes).c_str(), megabytes(peakRssBytes()).c_str(),
              packed.c_str());
  if (options.profile) {
    std::printf("%-5s %-18s %10s %6s  %s\n", "step", "kernel", "ms/iter", "share", "ONNX nodes");
    double total = 0;
    for (const rt::StepProfile &step : run.profile)
      total += step.seconds;
    for (size_t i = 0; i < run.profile.size(); ++i) {
      const rt::StepProfile &step = run.profile[i];
      std::printf("%-5zu %-18s %10.4f %5.1f%%  %s\n", i, step.kernel.c_str(),
                  step.seconds / options.iters * 1e3, total > 0 ? 100 * step.seconds / total : 0.0,
                  step.source.c_str());
      // What the kernel counted (moe_dispatch: entries per expert), per iteration.
      std::string counted;
      for (const auto &[name, total] : step.counters) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", double(total) / options.iters);
        counted += (counted.empty() ? "" : ", ") + name + " " + value;
      }
      if (!counted.empty())
        std::printf("      per iter: %s\n", counted.c_str());
    }
    if (rankTimes && rankTimes->size() > 1)
      std::printf("%s", rankBalanceTable(*rankTimes, options.iters).c_str());
  }
  std::fflush(stdout);
  return "";
}

} // namespace shardc::shardrun
