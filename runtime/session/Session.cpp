//===- Session.cpp - open an artifact once, run it ------------------------===//
#include "runtime/session/Session.h"

#include "runtime/session/ThreadedRanks.h"

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
  // Ranks of this process that read the same weight file share its copy.
  OpenedWeightFiles opened;
  for (int rank = first; rank < first + count; ++rank) {
    auto programs = loadStages(layout_, rank, &opened);
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

StatusOr<std::unique_ptr<PreparedRank>> Session::prepareRank(int rank, Communicator &world) const {
  return PreparedRank::prepare(plan_, layout_.pipeline.get(), programs(rank),
                               OutputGather(layout_, rank), world);
}

Status Session::runRank(int rank, Communicator &world,
                        const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                        RankRun &result) const {
  auto prepared = prepareRank(rank, world);
  if (!prepared)
    return prepared.status();
  return (*prepared)->run(inputs, options, result);
}

Status Session::runAsThreads(const std::vector<const HostTensor *> &inputs,
                             const RunOptions &options, std::chrono::milliseconds timeout,
                             std::vector<RankRun> &results) const {
  auto ranks = ThreadedRanks::prepare(*this, timeout);
  if (!ranks)
    return ranks.status();
  return (*ranks)->run(inputs, options, results);
}

} // namespace shardc::rt
