//===- NcclWatchdog.h - failure detection for one NCCL world ----*- C++ -*-===//
//
// Shared by every communicator of a world (runtime/comm/Nccl.cpp). It owns
// the list of live NCCL communicators, the operations in flight (a CUDA event
// before and after each one) and the history of the last ones, and a thread
// that polls them every 50 ms. All NCCL calls of the world are made under its
// lock: the communicators are non-blocking, so no call holds it for long, and
// an abort can never free a communicator in the middle of a call.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_NCCLWATCHDOG_H
#define SHARDC_RUNTIME_COMM_NCCLWATCHDOG_H

#include "runtime/core/Status.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace shardc::rt::comm {

/// "all_reduce: NCCL error: unhandled system error (ncclGetLastError's text)".
Status ncclStatus(ncclResult_t result, const std::string &what, ncclComm_t comm = nullptr);
Status cudaStatus(cudaError_t result, const std::string &what);

class NcclWatchdog {
public:
  using Clock = std::chrono::steady_clock;

  NcclWatchdog(int worldRank, int device, std::chrono::milliseconds timeout, size_t history,
               std::function<void(const std::string &)> onFailure);
  ~NcclWatchdog();
  NcclWatchdog(const NcclWatchdog &) = delete;
  NcclWatchdog &operator=(const NcclWatchdog &) = delete;

  std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Under lock():
  /// Watches `comm` (group `group` of `size` ranks) until remove().
  void add(ncclComm_t comm, int group, int size);
  void remove(ncclComm_t comm);
  /// The failure line, once there is one.
  bool failed() const { return failed_; }
  Status failure() const { return Status::error(failure_); }
  /// Records an event on `stream` before an operation is enqueued.
  Status begin(cudaStream_t stream, std::string what);
  /// Records the matching event after it; the operation is watched from now.
  Status end(cudaStream_t stream);
  /// Aborts every communicator, remembers "rank R: MESSAGE; last
  /// collectives: ..." and, with `notify`, has the thread call the handler.
  void fail(const std::string &message, bool notify);

  /// Waits (taking the lock for each poll) until `comm` is no longer
  /// ncclInProgress; an NCCL error or the timeout fails the world.
  Status waitReady(ncclComm_t comm, const std::string &what);

private:
  struct Operation {
    uint64_t sequence;
    std::string what;
    cudaEvent_t started = nullptr, finished = nullptr;
    Clock::time_point issued;
    bool running = false, done = false;
    Clock::time_point runningSince;
  };
  struct Watched {
    ncclComm_t comm;
    int group, size;
  };

  void loop();
  void poll();
  StatusOr<cudaEvent_t> event();
  void release(Operation &operation);
  std::string history() const;

  const int worldRank_, device_;
  const std::chrono::milliseconds timeout_;
  const size_t historyLength_;
  std::function<void(const std::string &)> onFailure_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stop_ = false, failed_ = false, notify_ = false;
  std::string failure_;
  std::vector<Watched> live_;
  std::deque<std::shared_ptr<Operation>> inFlight_, recent_;
  std::shared_ptr<Operation> opening_;
  std::vector<cudaEvent_t> freeEvents_;
  uint64_t sequence_ = 0;
};

} // namespace shardc::rt::comm

#endif
