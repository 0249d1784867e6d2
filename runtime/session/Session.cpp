//===- Session.cpp - open an artifact once, run it ------------------------===//
#include "runtime/session/Session.h"

#include "runtime/comm/InProcess.h"

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
  std::vector<Artifact> loaded;
  for (int rank = first; rank < first + count; ++rank) {
    auto artifact = loadArtifact(layout_, rank);
    if (!artifact)
      return artifact.status();
    loaded.push_back(std::move(*artifact));
  }
  firstRank_ = first;
  artifacts_ = std::move(loaded);
  return {};
}

StatusOr<std::vector<const HostTensor *>> Session::orderInputs(const NamedInputs &given) const {
  std::vector<const HostTensor *> ordered;
  if (Status status = checkInputs(artifacts_.front(), given, ordered); !status)
    return status;
  return ordered;
}

Status Session::runRank(int rank, Communicator &world,
                        const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                        RankRun &result) const {
  auto device = openDevice(plan_);
  if (!device)
    return device.status();
  auto executor = Executor::prepare(artifact(rank), **device, &world);
  if (!executor)
    return executor.status();
  for (int i = 0; i < options.warmup; ++i)
    if (Status status = (*executor)->run(inputs, result.outputs); !status)
      return status;
  for (int i = 0; i < options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status status = (*executor)->run(inputs, result.outputs, options.profile); !status)
      return status;
    result.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  result.arenaBytes = (*executor)->arenaBytes();
  result.profile = (*executor)->profile();
  return {};
}

Status Session::runAsThreads(const std::vector<const HostTensor *> &inputs,
                             const RunOptions &options, std::chrono::milliseconds timeout,
                             std::vector<RankRun> &results) const {
  const int ranks = static_cast<int>(artifacts_.size());
  comm::InProcessWorld world(ranks, timeout);
  results.assign(ranks, RankRun());
  return world.run([&](int rank, Communicator &communicator) {
    return runRank(firstRank_ + rank, communicator, inputs, options, results[rank]);
  });
}

} // namespace shardc::rt
