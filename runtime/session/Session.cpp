//===- Session.cpp - open an artifact once, run it ------------------------===//
#include "runtime/session/Session.h"

#include "runtime/comm/InProcess.h"
#include "runtime/session/PipelineRank.h"

namespace shardc::rt {

StatusOr<Session> Session::open(const std::string &directory) {
  auto layout = readArtifactLayout(directory);
  if (!layout)
    return layout.status();
  return Session(std::move(*layout));
}

Status Session::checkLaunch(int launched) const {
  if (layout_.target != "cpu" && layout_.target != "cuda")
    return Status::error(layout_.directory + ": compiled for target '" + layout_.target +
                         "'; this shardrun runs 'cpu' and 'cuda' artifacts");
  if (layout_.ranks != launched)
    return Status::error("the artifact was compiled for " + layout_.describe() + " but " +
                         std::to_string(launched) + (launched == 1 ? " was" : " were") +
                         " launched (run it with --np " + std::to_string(layout_.ranks) +
                         ", or mpirun -np " + std::to_string(layout_.ranks) + ")");
  return {};
}

Status Session::planDevice() {
  auto plan = rt::planDevice(layout_);
  if (!plan)
    return plan.status();
  plan_ = std::move(*plan);
  return {};
}

Status Session::loadRanks(int first, int count) {
  std::vector<std::vector<Artifact>> loaded;
  for (int rank = first; rank < first + count; ++rank) {
    auto programs = loadStages(layout_, rank);
    if (!programs)
      return programs.status();
    loaded.push_back(std::move(*programs));
  }
  firstRank_ = first;
  loaded_ = std::move(loaded);
  return {};
}

StatusOr<std::vector<const HostTensor *>> Session::orderInputs(const NamedInputs &given) const {
  std::vector<const HostTensor *> ordered;
  if (Status status = checkInputs(layout_.inputs, given, ordered); !status)
    return status;
  return ordered;
}

namespace {

/// The warm-up and timed runs of one rank, whatever runs it: `once(profile,
/// trace)` runs once.
template <typename RunOnce>
Status repeat(const RunOptions &options, RankRun &result, RunOnce once) {
  for (int i = 0; i < options.warmup; ++i)
    if (Status status = once(false, nullptr); !status)
      return status;
  for (int i = 0; i < options.iters; ++i) {
    const size_t firstEvent = result.trace.size();
    auto start = std::chrono::steady_clock::now();
    if (Status status = once(options.profile, options.trace ? &result.trace : nullptr); !status)
      return status;
    result.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (size_t event = firstEvent; event < result.trace.size(); ++event)
      result.trace[event].args.emplace_back("iteration", i);
  }
  return {};
}

} // namespace

Status Session::runRank(int rank, Communicator &world,
                        const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                        RankRun &result) const {
  auto device = openDevice(plan_);
  if (!device)
    return device.status();
  const std::vector<Artifact> &programs = this->programs(rank);
  if (layout_.pipeline) {
    auto pipeline = PipelineRank::prepare(*layout_.pipeline, programs, **device, world);
    if (!pipeline)
      return pipeline.status();
    if (Status status = repeat(options, result,
                               [&](bool profile, std::vector<TraceEvent> *trace) {
                                 return (*pipeline)->run(inputs, result.outputs, profile, trace);
                               });
        !status)
      return status;
    result.arenaBytes = (*pipeline)->arenaBytes();
    result.profile = (*pipeline)->profile();
    return {};
  }
  auto executor = Executor::prepare(programs.front(), **device, &world);
  if (!executor)
    return executor.status();
  if (Status status = repeat(
          options, result,
          [&](bool profile, std::vector<TraceEvent> *trace) {
            // One event per run; its steps' events (with --profile) inside it.
            const int64_t start = trace ? traceClockUs() : 0;
            if (Status status = (*executor)->run(inputs, result.outputs, profile, trace); !status)
              return status;
            if (trace)
              trace->push_back({"run", "run", start, traceClockUs() - start, {}});
            return Status();
          });
      !status)
    return status;
  result.arenaBytes = (*executor)->arenaBytes();
  result.profile = (*executor)->profile();
  return {};
}

Status Session::runAsThreads(const std::vector<const HostTensor *> &inputs,
                             const RunOptions &options, std::chrono::milliseconds timeout,
                             std::vector<RankRun> &results) const {
  const int ranks = static_cast<int>(loaded_.size());
  comm::InProcessWorld world(ranks, timeout);
  results.assign(ranks, RankRun());
  return world.run([&](int rank, Communicator &communicator) {
    return runRank(firstRank_ + rank, communicator, inputs, options, results[rank]);
  });
}

} // namespace shardc::rt
