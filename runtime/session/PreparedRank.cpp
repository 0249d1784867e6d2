//===- PreparedRank.cpp - one rank's programs, ready to run ---------------===//
#include "runtime/session/PreparedRank.h"

#include <chrono>

namespace shardc::rt {

StatusOr<std::unique_ptr<PreparedRank>> PreparedRank::prepare(const DevicePlan &plan,
                                                              const PipelinePlan *pipeline,
                                                              const std::vector<Artifact> &programs,
                                                              OutputGather gather,
                                                              Communicator &world) {
  auto device = openDevice(plan);
  if (!device)
    return device.status();
  std::unique_ptr<PreparedRank> rank(
      new PreparedRank(std::move(*device), std::move(gather)));
  // First, on every rank: the world is split in the same order everywhere.
  if (Status status = rank->gather_.connect(world); !status)
    return status;
  if (pipeline) {
    auto prepared = PipelineRank::prepare(*pipeline, programs, *rank->device_, world);
    if (!prepared)
      return prepared.status();
    rank->pipeline_ = std::move(*prepared);
    return rank;
  }
  auto executor = Executor::prepare(programs.front(), *rank->device_, &world);
  if (!executor)
    return executor.status();
  rank->executor_ = std::move(*executor);
  return rank;
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

Status PreparedRank::gatherOutputs(std::vector<HostTensor> &outputs) {
  outputs.resize(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (!gather_.gathers(i)) {
      // Whole already: the buffers trade places, each reused next run.
      std::swap(outputs[i], pieces_[i]);
      continue;
    }
    if (Status status = gather_.gather(i, pieces_[i], outputs[i], *device_); !status)
      return status;
  }
  // Only the output rank holds them whole.
  if (!gather_.holdsWhole())
    outputs.clear();
  return {};
}

Status PreparedRank::run(const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                         RankRun &result) {
  if (pipeline_) {
    if (Status status = repeat(options, result,
                               [&](bool profile, std::vector<TraceEvent> *trace) {
                                 return pipeline_->run(inputs, gather_, result.outputs, profile,
                                                       trace);
                               });
        !status)
      return status;
    result.arenaBytes = pipeline_->arenaBytes();
    result.profile = pipeline_->profile();
    return {};
  }
  if (Status status = repeat(
          options, result,
          [&](bool profile, std::vector<TraceEvent> *trace) {
            // One event per run; its steps' events (with --profile) inside it.
            const int64_t start = trace ? traceClockUs() : 0;
            // With runtime gathers the program returns pieces (pieces_).
            std::vector<HostTensor> &returned = gather_.any() ? pieces_ : result.outputs;
            if (Status status = executor_->run(inputs, returned, profile, trace); !status)
              return status;
            if (gather_.any())
              if (Status status = gatherOutputs(result.outputs); !status)
                return status;
            if (trace)
              trace->push_back({"run", "run", start, traceClockUs() - start, {}});
            return Status();
          });
      !status)
    return status;
  result.arenaBytes = executor_->arenaBytes();
  result.profile = executor_->profile();
  return {};
}

} // namespace shardc::rt
