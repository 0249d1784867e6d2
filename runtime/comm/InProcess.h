//===- InProcess.h - ranks as threads of one process ------------*- C++ -*-===//
//
// `shardrun --np N` and the tests run N ranks as threads sharing an
// InProcessWorld. The ranks share memory, so the collectives do not pass
// messages: each rank publishes its buffers to the group, a barrier makes
// them visible, and each rank reads its peers' buffers directly — an
// all-reduce adds up its own block from every rank's buffer in place (in
// rank order, so every rank gets the same bits), meets the others again,
// and copies the other blocks from their owners; a final barrier keeps every
// buffer alive until the peers are done with it. No message is copied and
// nothing is allocated per call. Every member compares what the others
// published, so ranks that disagree on the collective, a size, a type or a
// root all get an error naming the difference, never a corrupted buffer.
//
// Point-to-point goes through mailboxes (a message queued per sender, group
// context and kind): sends are buffered (they never wait), so no schedule of
// sends and receives can deadlock on a send. A wait (a receive or a barrier)
// ends when its partners arrive, when the world fails (abort(): every waiting
// rank returns "rank R failed: REASON" promptly) or at the operation's
// timeout (default 10 minutes), which turns a hang into an error naming the
// ranks that never came. The world starts no threads of its own; run()
// starts and joins the ranks' threads.
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

  /// How long a rank that reaches a barrier first spins before it sleeps:
  /// long when every rank can have a core of its own, short when ranks
  /// outnumber the cores and a spinning rank would hold up a peer's work.
  std::chrono::microseconds spinInterval() const { return spinInterval_; }

  /// How long one collective or receive may wait before it fails.
  void setTimeout(std::chrono::milliseconds timeout) { timeoutMs_.store(timeout.count()); }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(timeoutMs_.load()); }

  /// Runs body(rank, world communicator) on one thread per rank and joins
  /// them all. A rank whose body fails (or throws) aborts the world, so no
  /// other rank waits for it. Returns success, or the error of the rank that
  /// failed first — prefixed "rank R: " when there is more than one rank — in
  /// preference to the "rank R failed" errors it caused elsewhere.
  Status run(const std::function<Status(int rank, Communicator &world)> &body);
  /// run() on the ranks' own world communicators (`worlds[rank]`, made by
  /// communicator(rank)), for ranks that keep what they prepared on them
  /// from one run to the next (runtime/session/ThreadedRanks.h).
  Status run(const std::vector<std::unique_ptr<Communicator>> &worlds,
             const std::function<Status(int rank, Communicator &world)> &body);

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

  /// What a rank gives a collective: its buffers and arguments.
  struct Published {
    const void *in = nullptr;
    void *out = nullptr;
    size_t count = 0; ///< elements of dtype (bytes for the data movers)
    DType dtype = DType::U8;
    int root = 0;
    const char *collective = "";
    /// allToAllV's block sizes, one per group rank (null elsewhere).
    const size_t *sendBytes = nullptr;
    const size_t *recvBytes = nullptr;
  };
  /// A group's meeting point: one slot per group rank and a barrier.
  struct Rendezvous {
    explicit Rendezvous(int size) : slots(size), present(size, false) {}
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<Published> slots;
    std::vector<bool> present; ///< who has arrived at the current barrier
    int arrived = 0;
    /// Written under `mutex`; read without it by a rank spinning (meet).
    std::atomic<uint64_t> generation{0};
  };
  /// The rendezvous of the group with `context` (of `size` ranks).
  Rendezvous &rendezvous(uint64_t context, int size);
  /// Waits at the group's barrier until every member arrives; `members` are
  /// the group ranks' world ranks, `what` names the operation in errors.
  /// With `peersMayRead` (a barrier after a phase in which peers read this
  /// rank's buffers), a failed world still waits for the peers to arrive:
  /// only a collective's first barrier fails at once.
  Status meet(Rendezvous &rendezvous, int groupRank, const std::vector<int> &members,
              Clock::time_point deadline, const std::string &what, bool peersMayRead);

private:
  using Key = std::tuple<int, uint64_t, int>; // sender, context, kind
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<Key, std::deque<std::vector<std::byte>>> queues;
  };

  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  std::atomic<int64_t> timeoutMs_;
  std::chrono::microseconds spinInterval_;
  std::atomic<bool> failed_{false};
  mutable std::mutex failureMutex_;
  int failedRank_ = -1;
  std::string failure_;
  std::mutex contextMutex_;
  std::map<std::tuple<uint64_t, uint64_t, int>, uint64_t> contexts_;
  std::map<uint64_t, std::unique_ptr<Rendezvous>> rendezvous_; // by context
  uint64_t nextContext_ = 1; // 0 is the world's
};

} // namespace shardc::rt::comm

#endif
