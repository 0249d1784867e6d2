//===- InProcess.h - ranks as threads of one process ------------*- C++ -*-===//
//
// `shardrun --np N` and the tests run N ranks as threads sharing an
// InProcessWorld. The communicators move bytes the way a network would:
// every rank has a mailbox of messages queued per (sender, group context,
// kind), and the collectives are the classic algorithms on point-to-point
// messages — ring all-reduce (a ring reduce-scatter, then a ring all-gather
// of the reduced blocks), ring all-gather and reduce-scatter, pairwise
// all-to-all, binomial-tree broadcast — so a test here exercises the same
// message pattern a real interconnect would, including a rank that disagrees
// on a size (an error naming both, not a corrupted buffer).
//
// Sends are buffered (they never wait), so no schedule of the collectives can
// deadlock on a send. A receive waits for its message, for the world to fail
// (abort(): every waiting receive on every rank returns "rank R failed:
// REASON" promptly) or for the operation's timeout (default 10 minutes),
// which turns a hang into an error naming the collective. The world starts no
// threads of its own; run() starts and joins the ranks' threads.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_INPROCESS_H
#define SHARDC_RUNTIME_COMM_INPROCESS_H

#include "runtime/core/Communicator.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace shardc::rt::comm {

class InProcessWorld {
public:
  static constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(10);

  explicit InProcessWorld(int ranks, std::chrono::milliseconds timeout = kDefaultTimeout);
  InProcessWorld(const InProcessWorld &) = delete;
  InProcessWorld &operator=(const InProcessWorld &) = delete;

  int size() const { return static_cast<int>(mailboxes_.size()); }

  /// Rank `rank`'s communicator over the whole world. The world must outlive
  /// it; each rank uses its communicators from one thread at a time.
  std::unique_ptr<Communicator> communicator(int rank);

  /// Rank `rank` failed: from now on every receive fails with
  /// "rank RANK failed: REASON". The first abort is the one remembered.
  void abort(int rank, const std::string &reason);
  bool failed() const { return failed_.load(); }
  /// "rank R failed: REASON" of the first abort (empty while none).
  std::string failure() const;
  /// The rank that aborted first (-1 while none).
  int failedRank() const;

  /// How long one collective or receive may wait before it fails.
  void setTimeout(std::chrono::milliseconds timeout) { timeoutMs_.store(timeout.count()); }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeoutMs_.load()); }

  /// Runs body(rank, world communicator) on one thread per rank and joins
  /// them all. A rank whose body fails (or throws) aborts the world, so no
  /// other rank waits for it. Returns success, or the error of the rank that
  /// failed first — prefixed "rank R: " when there is more than one rank — in
  /// preference to the "rank R failed" errors it caused elsewhere.
  Status run(const std::function<Status(int rank, Communicator &world)> &body);

  // The transport, for the communicators (runtime/comm/InProcess.cpp).
  using Clock = std::chrono::steady_clock;
  /// Queues a copy of `bytes` bytes for `destination`.
  Status post(int source, int destination, uint64_t context, int kind, const void *data,
              size_t bytes);
  /// Takes the next message from `source` into `data`, which must be exactly
  /// `bytes` long; `what` names the operation in errors.
  Status take(int destination, int source, uint64_t context, int kind, void *data, size_t bytes,
              Clock::time_point deadline, const std::string &what);
  /// The context of the group of `color` made by the `sequence`-th split of
  /// the group with context `parent`: fresh, and the same for every member.
  uint64_t contextOf(uint64_t parent, uint64_t sequence, int color);

private:
  using Key = std::tuple<int, uint64_t, int>; // sender, context, kind
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<Key, std::deque<std::vector<std::byte>>> queues;
  };

  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  std::atomic<int64_t> timeoutMs_;
  std::atomic<bool> failed_{false};
  mutable std::mutex failureMutex_;
  int failedRank_ = -1;
  std::string failure_;
  std::mutex contextMutex_;
  std::map<std::tuple<uint64_t, uint64_t, int>, uint64_t> contexts_;
  uint64_t nextContext_ = 1; // 0 is the world's
};

} // namespace shardc::rt::comm

#endif
