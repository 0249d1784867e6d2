//===- ThreadedRanks.cpp - a session's ranks as threads, prepared once ----===//
#include "runtime/session/ThreadedRanks.h"

#include "runtime/session/Session.h"

namespace shardc::rt {

ThreadedRanks::ThreadedRanks(int ranks, std::chrono::milliseconds timeout)
    : world_(ranks, timeout), ranks_(ranks) {
  for (int rank = 0; rank < ranks; ++rank)
    worlds_.push_back(world_.communicator(rank));
}

StatusOr<std::unique_ptr<ThreadedRanks>> ThreadedRanks::prepare(const Session &session,
                                                                std::chrono::milliseconds timeout) {
  std::unique_ptr<ThreadedRanks> threaded(new ThreadedRanks(session.loadedRanks(), timeout));
  if (Status status = threaded->world_.run(threaded->worlds_,
                                           [&](int rank, Communicator &world) {
                                             auto prepared = session.prepareRank(
                                                 session.firstLoadedRank() + rank, world);
                                             if (!prepared)
                                               return prepared.status();
                                             threaded->ranks_[rank] = std::move(*prepared);
                                             return Status();
                                           });
      !status)
    return status;
  return threaded;
}

Status ThreadedRanks::run(const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                          std::vector<RankRun> &results) {
  results.assign(ranks_.size(), RankRun());
  return world_.run(worlds_, [&](int rank, Communicator &) {
    return ranks_[rank]->run(inputs, options, results[rank]);
  });
}

} // namespace shardc::rt
