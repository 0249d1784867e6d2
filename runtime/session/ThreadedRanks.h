//===- ThreadedRanks.h - a session's ranks as threads, prepared once -*- C++ -*-===//
//
// Every rank a Session loaded, prepared once as a thread of this process on
// an in-process world, then run as often as asked, like onnxruntime's
// InferenceSession (the Python binding keeps one per shardc.Session). The
// world and each rank's world communicator live as long as the prepared
// ranks, whose collective groups were split from them. A run that fails
// aborts the world for good: prepare again after one. The Session must
// outlive it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_THREADEDRANKS_H
#define SHARDC_RUNTIME_SESSION_THREADEDRANKS_H

#include "runtime/comm/InProcess.h"
#include "runtime/session/PreparedRank.h"

#include <chrono>
#include <memory>
#include <vector>

namespace shardc::rt {

class Session;

class ThreadedRanks {
public:
  /// Prepares every loaded rank of `session`, each on its thread; their
  /// collectives wait at most `timeout`.
  static StatusOr<std::unique_ptr<ThreadedRanks>> prepare(const Session &session,
                                                          std::chrono::milliseconds timeout);

  /// Runs every rank on `inputs` (in the artifact's input order); `results`
  /// by rank.
  Status run(const std::vector<const HostTensor *> &inputs, const RunOptions &options,
             std::vector<RankRun> &results);

  /// The prepared ranks, by index among the session's loaded ranks.
  int size() const { return static_cast<int>(ranks_.size()); }
  PreparedRank &rank(int index) { return *ranks_.at(static_cast<size_t>(index)); }

private:
  ThreadedRanks(int ranks, std::chrono::milliseconds timeout);

  // In this order, so that the ranks go before the communicators they use,
  // and those before their world.
  comm::InProcessWorld world_;
  std::vector<std::unique_ptr<Communicator>> worlds_;
  std::vector<std::unique_ptr<PreparedRank>> ranks_;
};

} // namespace shardc::rt

#endif
