//===- InProcess.cpp - ranks as threads of one process --------------------===//
#include "runtime/comm/InProcess.h"

#include "runtime/comm/Reduction.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>

namespace shardc::rt::comm {
namespace {

/// Message kind of point-to-point traffic (the collectives send none).
constexpr int kPointToPoint = 0;

/// The longest a receive sleeps before it looks at the world again; abort()
/// wakes it at once, this only bounds the damage of a missed wakeup.
constexpr std::chrono::milliseconds kPollInterval(100);

/// How long a rank at a barrier spins before it sleeps (meet), when each
/// rank can have a core, and when ranks outnumber the cores.
///
/// Ranks of a tensor-parallel program arrive within microseconds to a few
/// hundred of each other, and waking a thread that slept on the condition
/// variable costs 15-30 us on one machine and about 100 us on another (an
/// all-reduce meets three times; GPT-2's tp=2 step has 25). With a core
/// each, a waiting rank has nothing else to run, so it spins long enough to
/// cover a late peer: a 384 KiB all-reduce between 2 rank threads took
/// 0.137 ms with a 50 us spin and 0.040 ms with 1 ms (shardc-bench-
/// collectives 0.375 200, 2-vCPU Zen 4). Oversubscribed, a spinning rank
/// would take the time of the peer it waits for.
constexpr std::chrono::microseconds kSpinWithCores(1000);
constexpr std::chrono::microseconds kSpinOversubscribed(50);

void copyBytes(void *to, const void *from, size_t bytes) {
  if (bytes)
    std::memmove(to, from, bytes);
}

std::string seconds(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", duration.count() / 1000.0);
  return text;
}

class InProcessCommunicator final : public Communicator {
public:
  InProcessCommunicator(InProcessWorld &world, uint64_t context, std::vector<int> members, int rank)
      : world_(world), context_(context), members_(std::move(members)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }

  // Block r of the sum is added up by rank r straight from every rank's
  // buffer, in rank order, into its own buffer; then every rank copies the
  // other blocks from their owners. Each element is read n times and
  // written twice, with no message copies.
  Status allReduceSum(void *data, size_t count, DType dtype) override {
    if (Status status = checkSummable(dtype, "all_reduce"); !status)
      return status;
    Exchange exchange(*this, "all_reduce", {data, data, count, dtype});
    if (Status status = exchange.begin(); !status || size() == 1)
      return status;
    const size_t element = dtypeSize(dtype);
    auto blockOf = [&](int block) { return std::pair(count * block / size(), count * (block + 1) / size()); };
    auto [begin, end] = blockOf(rank_);
    std::vector<const void *> sources;
    for (const Published &peer : exchange.peers())
      sources.push_back(static_cast<const std::byte *>(peer.in) + begin * element);
    sumInOrder(sources, static_cast<std::byte *>(data) + begin * element, end - begin, dtype);
    if (Status status = exchange.sync(); !status)
      return status;
    for (int block = 0; block < size(); ++block) {
      auto [from, to] = blockOf(block);
      if (block != rank_)
        copyBytes(static_cast<std::byte *>(data) + from * element,
                  static_cast<const std::byte *>(exchange.peers()[block].in) + from * element,
                  (to - from) * element);
    }
    return exchange.end();
  }

  Status allGather(const void *in, void *out, size_t bytesPerRank) override {
    Exchange exchange(*this, "all_gather", {in, out, bytesPerRank, DType::U8});
    if (Status status = exchange.begin(); !status)
      return status;
    for (int peer = 0; peer < size(); ++peer)
      copyBytes(static_cast<std::byte *>(out) + peer * bytesPerRank, exchange.peers()[peer].in,
                bytesPerRank);
    return exchange.end();
  }

  Status allGatherRows(const void *in, void *out, size_t rows, size_t rowBytes) override {
    Exchange exchange(*this, "all_gather", {in, out, rows * rowBytes, DType::U8});
    if (Status status = exchange.begin(); !status)
      return status;
    const size_t n = static_cast<size_t>(size());
    auto *to = static_cast<std::byte *>(out);
    for (size_t peer = 0; peer < n; ++peer) {
      const auto *from = static_cast<const std::byte *>(exchange.peers()[peer].in);
      for (size_t row = 0; row < rows; ++row)
        copyBytes(to + (row * n + peer) * rowBytes, from + row * rowBytes, rowBytes);
    }
    return exchange.end();
  }

  Status gather(const void *in, void *out, size_t bytesPerRank, int root) override {
    if (Status status = checkPeer(root, "gather"); !status)
      return status;
    // Every rank copies its own piece into the root's buffer, all at once;
    // the closing barrier keeps the root's buffer and the pieces alive until
    // the last copy is done. (The root copying every piece itself took
    // twice as long: GPT-2's 2 x 25.7 MB logits, 7.4-11 ms against 3.3-4.)
    Exchange exchange(*this, "gather", {in, out, bytesPerRank, DType::U8, root});
    if (Status status = exchange.begin(); !status)
      return status;
    copyBytes(static_cast<std::byte *>(exchange.peers()[root].out) + rank_ * bytesPerRank, in,
              bytesPerRank);
    return exchange.end();
  }

  Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) override {
    if (Status status = checkSummable(dtype, "reduce_scatter"); !status)
      return status;
    Exchange exchange(*this, "reduce_scatter", {in, out, countPerRank, dtype});
    if (Status status = exchange.begin(); !status)
      return status;
    const size_t offset = rank_ * countPerRank * dtypeSize(dtype);
    std::vector<const void *> sources;
    for (const Published &peer : exchange.peers())
      sources.push_back(static_cast<const std::byte *>(peer.in) + offset);
    sumInOrder(sources, out, countPerRank, dtype);
    return exchange.end();
  }

  Status allToAll(const void *in, void *out, size_t bytesPerRank) override {
    Exchange exchange(*this, "all_to_all", {in, out, bytesPerRank, DType::U8});
    if (Status status = exchange.begin(); !status)
      return status;
    for (int peer = 0; peer < size(); ++peer)
      copyBytes(static_cast<std::byte *>(out) + peer * bytesPerRank,
                static_cast<const std::byte *>(exchange.peers()[peer].in) + rank_ * bytesPerRank,
                bytesPerRank);
    return exchange.end();
  }

  // Each rank copies its block from every peer's buffer, at the offset the
  // peer's own sizes give; the sizes of the whole group are checked first.
  Status allToAllV(const void *in, const size_t *sendBytes, void *out,
                   const size_t *recvBytes) override {
    Published mine{in, out, 0, DType::U8};
    mine.sendBytes = sendBytes;
    mine.recvBytes = recvBytes;
    Exchange exchange(*this, "all_to_all_v", mine);
    if (Status status = exchange.begin(); !status)
      return status;
    // The sizes are read from the peers' arrays: a failed check still meets
    // the group, so that no caller frees them while another rank reads.
    if (Status status = exchange.checkBlockSizes(); !status) {
      (void)exchange.end();
      return status;
    }
    auto *to = static_cast<std::byte *>(out);
    for (int peer = 0; peer < size(); ++peer) {
      const Published &theirs = exchange.peers()[peer];
      size_t offset = 0; // of this rank's block in the peer's buffer
      for (int before = 0; before < rank_; ++before)
        offset += theirs.sendBytes[before];
      copyBytes(to, static_cast<const std::byte *>(theirs.in) + offset, recvBytes[peer]);
      to += recvBytes[peer];
    }
    return exchange.end();
  }

  Status broadcast(void *data, size_t bytes, int root) override {
    if (root < 0 || root >= size())
      return Status::error("broadcast: root " + std::to_string(root) + " is not a rank of the " +
                           std::to_string(size()) + "-rank group");
    Exchange exchange(*this, "broadcast", {data, data, bytes, DType::U8, root});
    if (Status status = exchange.begin(); !status)
      return status;
    if (rank_ != root)
      copyBytes(data, exchange.peers()[root].in, bytes);
    return exchange.end();
  }

  Status send(const void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "send"); !status)
      return status;
    Operation op(*this, "send", kPointToPoint);
    return op.send(peer, data, bytes);
  }

  Status recv(void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "recv"); !status)
      return status;
    Operation op(*this, "recv", kPointToPoint);
    return op.receive(peer, data, bytes);
  }

  StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override {
    const int64_t mine[3] = {color, key, rank_};
    std::vector<int64_t> all(3 * size());
    if (Status status = allGather(mine, all.data(), sizeof mine); !status)
      return status;
    const uint64_t sequence = splits_++;
    if (color < 0)
      return std::unique_ptr<Communicator>();
    std::vector<std::pair<int64_t, int64_t>> order; // (key, rank here) of the new group
    for (int i = 0; i < size(); ++i)
      if (all[3 * i] == color)
        order.emplace_back(all[3 * i + 1], all[3 * i + 2]);
    std::sort(order.begin(), order.end());
    std::vector<int> members;
    int newRank = -1;
    for (const auto &[memberKey, member] : order) {
      if (member == rank_)
        newRank = static_cast<int>(members.size());
      members.push_back(members_[member]);
    }
    return std::unique_ptr<Communicator>(std::make_unique<InProcessCommunicator>(
        world_, world_.contextOf(context_, sequence, color), std::move(members), newRank));
  }

  void abort(const std::string &reason) override { world_.abort(members_[rank_], reason); }

private:
  /// One collective or point-to-point call: its name and deadline for the
  /// errors, group ranks translated to the world's.
  struct Operation {
    Operation(InProcessCommunicator &self, const char *name, int kind)
        : self(self), name(name), kind(kind),
          deadline(InProcessWorld::Clock::now() + self.world_.timeout()) {}

    Status send(int peer, const void *data, size_t bytes) {
      return self.world_.post(self.members_[self.rank_], self.members_[peer], self.context_, kind,
                              data, bytes);
    }
    Status receive(int peer, void *data, size_t bytes) {
      return self.world_.take(self.members_[self.rank_], self.members_[peer], self.context_, kind,
                              data, bytes, deadline,
                              name + " (group rank " + std::to_string(self.rank_) + " of " +
                                  std::to_string(self.size()) + ", from group rank " +
                                  std::to_string(peer) + ")");
    }

    InProcessCommunicator &self;
    std::string name;
    int kind;
    InProcessWorld::Clock::time_point deadline;
  };

  using Published = InProcessWorld::Published;

  /// One collective: this rank's buffers published to the group between
  /// barriers. begin() publishes and meets the group, then checks that every
  /// member called the same collective with the same arguments (all see the
  /// same slots, so all fail alike); sync() is a barrier inside the work;
  /// end() the barrier after which peers no longer read this rank's buffers.
  class Exchange {
  public:
    Exchange(InProcessCommunicator &self, const char *collective, Published mine)
        : self_(self), mine_(mine),
          deadline_(InProcessWorld::Clock::now() + self.world_.timeout()),
          what_(std::string(collective) + " (group rank " + std::to_string(self.rank_) + " of " +
                std::to_string(self.size()) + ")"),
          rendezvous_(self.world_.rendezvous(self.context_, self.size())) {
      mine_.collective = collective;
    }

    Status begin() {
      {
        std::lock_guard<std::mutex> lock(rendezvous_.mutex);
        rendezvous_.slots[self_.rank_] = mine_;
      }
      // Nobody reads the slots before everyone has published: no waiting
      // for readers if the world fails here.
      if (Status status = meet(/*peersMayRead=*/false); !status)
        return status;
      for (int peer = 0; peer < self_.size(); ++peer) {
        const Published &theirs = rendezvous_.slots[peer];
        std::string who = what_ + ": group rank " + std::to_string(peer);
        if (std::strcmp(theirs.collective, mine_.collective) != 0)
          return Status::error(who + " is in " + theirs.collective +
                               " (the ranks disagree on the collective)");
        if (theirs.count != mine_.count)
          return Status::error(who + " gives " + std::to_string(theirs.count) + ", this rank " +
                               std::to_string(mine_.count) + " (the ranks disagree on the size)");
        if (theirs.dtype != mine_.dtype || theirs.root != mine_.root)
          return Status::error(who + " gives another " +
                               (theirs.dtype != mine_.dtype ? "element type" : "root") +
                               " (the ranks disagree)");
      }
      return {};
    }
    const std::vector<Published> &peers() const { return rendezvous_.slots; }
    /// allToAllV: what each rank sends each other one is what that one
    /// expects. Every member checks the whole group, so all fail alike.
    Status checkBlockSizes() const {
      const std::vector<Published> &slots = rendezvous_.slots;
      for (size_t from = 0; from < slots.size(); ++from)
        for (size_t to = 0; to < slots.size(); ++to)
          if (slots[from].sendBytes[to] != slots[to].recvBytes[from])
            return Status::error(what_ + ": group rank " + std::to_string(from) + " sends " +
                                 std::to_string(slots[from].sendBytes[to]) +
                                 " bytes to group rank " + std::to_string(to) + ", which expects " +
                                 std::to_string(slots[to].recvBytes[from]) +
                                 " (the ranks disagree on the size)");
      return {};
    }
    Status sync() { return meet(/*peersMayRead=*/true); }
    Status end() { return sync(); }

  private:
    Status meet(bool peersMayRead) {
      return self_.world_.meet(rendezvous_, self_.rank_, self_.members_, deadline_, what_,
                               peersMayRead);
    }

    InProcessCommunicator &self_;
    Published mine_;
    InProcessWorld::Clock::time_point deadline_;
    std::string what_;
    InProcessWorld::Rendezvous &rendezvous_;
  };

  Status checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size())
      return Status::error(std::string(what) + ": peer " + std::to_string(peer) +
                           " is not a rank of the " + std::to_string(size()) + "-rank group");
    return {};
  }

  InProcessWorld &world_;
  uint64_t context_;
  std::vector<int> members_; // world rank of each group rank
  int rank_;
  uint64_t splits_ = 0;
};

} // namespace

InProcessWorld::InProcessWorld(int ranks, std::chrono::milliseconds timeout)
    : timeoutMs_(timeout.count()),
      // hardware_concurrency() is 0 where the count is unknown: one core.
      spinInterval_(static_cast<unsigned>(ranks) <= std::max(1u, std::thread::hardware_concurrency())
                        ? kSpinWithCores
                        : kSpinOversubscribed) {
  for (int i = 0; i < std::max(ranks, 1); ++i)
    mailboxes_.push_back(std::make_unique<Mailbox>());
}

std::unique_ptr<Communicator> InProcessWorld::communicator(int rank) {
  std::vector<int> members(mailboxes_.size());
  for (size_t i = 0; i < members.size(); ++i)
    members[i] = static_cast<int>(i);
  return std::make_unique<InProcessCommunicator>(*this, 0, std::move(members), rank);
}

void InProcessWorld::abort(int rank, const std::string &reason) {
  {
    std::lock_guard<std::mutex> lock(failureMutex_);
    if (failedRank_ < 0) {
      failedRank_ = rank;
      failure_ = "rank " + std::to_string(rank) + " failed: " + reason;
    }
  }
  failed_.store(true);
  // Taking each mailbox's lock before notifying means a receiver is either
  // still before its check of failed_ (and will see it) or already waiting.
  for (const std::unique_ptr<Mailbox> &mailbox : mailboxes_) {
    std::lock_guard<std::mutex> lock(mailbox->mutex);
    mailbox->arrived.notify_all();
  }
  std::lock_guard<std::mutex> contexts(contextMutex_);
  for (auto &[context, rendezvous] : rendezvous_) {
    std::lock_guard<std::mutex> lock(rendezvous->mutex);
    rendezvous->changed.notify_all();
  }
}

std::string InProcessWorld::failure() const {
  std::lock_guard<std::mutex> lock(failureMutex_);
  return failure_;
}

int InProcessWorld::failedRank() const {
  std::lock_guard<std::mutex> lock(failureMutex_);
  return failedRank_;
}

Status InProcessWorld::post(int source, int destination, uint64_t context, int kind,
                            const void *data, size_t bytes) {
  if (failed_.load())
    return Status::error(failure());
  std::vector<std::byte> message(bytes);
  copyBytes(message.data(), data, bytes);
  Mailbox &mailbox = *mailboxes_[destination];
  {
    std::lock_guard<std::mutex> lock(mailbox.mutex);
    mailbox.queues[{source, context, kind}].push_back(std::move(message));
  }
  mailbox.arrived.notify_all();
  return {};
}

Status InProcessWorld::take(int destination, int source, uint64_t context, int kind, void *data,
                            size_t bytes, Clock::time_point deadline, const std::string &what) {
  Mailbox &mailbox = *mailboxes_[destination];
  std::unique_lock<std::mutex> lock(mailbox.mutex);
  const Key key{source, context, kind};
  for (;;) {
    auto queue = mailbox.queues.find(key);
    if (queue != mailbox.queues.end() && !queue->second.empty()) {
      std::vector<std::byte> message = std::move(queue->second.front());
      queue->second.pop_front();
      if (queue->second.empty())
        mailbox.queues.erase(queue);
      lock.unlock();
      if (message.size() != bytes)
        return Status::error(what + ": received " + std::to_string(message.size()) +
                             " bytes, expected " + std::to_string(bytes) +
                             " (the ranks disagree on the size)");
      copyBytes(data, message.data(), bytes);
      return {};
    }
    if (failed_.load()) {
      lock.unlock();
      return Status::error(failure());
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline)
      return Status::error(what + ": timed out after " + seconds(timeout()) +
                           " waiting for world rank " + std::to_string(source));
    mailbox.arrived.wait_for(lock, std::min<Clock::duration>(deadline - now, kPollInterval));
  }
}

InProcessWorld::Rendezvous &InProcessWorld::rendezvous(uint64_t context, int size) {
  std::lock_guard<std::mutex> lock(contextMutex_);
  std::unique_ptr<Rendezvous> &entry = rendezvous_[context];
  if (!entry)
    entry = std::make_unique<Rendezvous>(size);
  return *entry;
}

Status InProcessWorld::meet(Rendezvous &rendezvous, int groupRank, const std::vector<int> &members,
                            Clock::time_point deadline, const std::string &what,
                            bool peersMayRead) {
  std::unique_lock<std::mutex> lock(rendezvous.mutex);
  const uint64_t generation = rendezvous.generation.load();
  rendezvous.present[groupRank] = true;
  if (++rendezvous.arrived == int(members.size())) {
    rendezvous.arrived = 0;
    rendezvous.present.assign(members.size(), false);
    rendezvous.generation.fetch_add(1);
    rendezvous.changed.notify_all();
    return {};
  }
  // Ranks arrive close together and waking a sleeper is slow (see
  // kSpinWithCores), so first spin a while on the generation, without the
  // lock; only a peer that is late puts this rank to sleep.
  lock.unlock();
  const Clock::time_point spinUntil = Clock::now() + spinInterval_;
  while (rendezvous.generation.load(std::memory_order_acquire) == generation &&
         Clock::now() < spinUntil)
    std::this_thread::yield();
  lock.lock();
  for (;;) {
    if (rendezvous.generation != generation)
      return {};
    // Leaving without the others: take this rank's arrival back, so the
    // barrier cannot complete without it and send peers into a phase that
    // reads buffers its caller is about to free.
    auto leave = [&] {
      --rendezvous.arrived;
      rendezvous.present[groupRank] = false;
    };
    // A failed world ends the wait at a collective's first barrier only.
    // After it, every peer is in a phase reading this rank's buffers and
    // comes here when done (it only reads memory): the group finishes the
    // collective together and fails at its next one.
    if (failed_.load() && !peersMayRead) {
      leave();
      lock.unlock();
      return Status::error(failure());
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      std::string missing;
      for (size_t rank = 0; rank < members.size(); ++rank)
        if (!rendezvous.present[rank])
          missing += (missing.empty() ? "" : ", ") + std::string("group rank ") +
                     std::to_string(rank) + " (world rank " + std::to_string(members[rank]) + ")";
      leave();
      return Status::error(what + ": timed out after " + seconds(timeout()) + " waiting for " +
                           missing);
    }
    rendezvous.changed.wait_for(lock, std::min<Clock::duration>(deadline - now, kPollInterval));
  }
}

uint64_t InProcessWorld::contextOf(uint64_t parent, uint64_t sequence, int color) {
  std::lock_guard<std::mutex> lock(contextMutex_);
  auto [entry, inserted] = contexts_.try_emplace({parent, sequence, color}, nextContext_);
  if (inserted)
    ++nextContext_;
  return entry->second;
}

Status InProcessWorld::run(const std::function<Status(int rank, Communicator &world)> &body) {
  std::vector<std::unique_ptr<Communicator>> worlds;
  for (int rank = 0; rank < size(); ++rank)
    worlds.push_back(communicator(rank));
  return run(worlds, body);
}

Status InProcessWorld::run(const std::vector<std::unique_ptr<Communicator>> &worlds,
                           const std::function<Status(int rank, Communicator &world)> &body) {
  std::vector<Status> results(mailboxes_.size());
  auto rankMain = [&](int rank) {
    Status status;
    try {
      status = body(rank, *worlds[rank]);
    } catch (const std::exception &error) {
      status = Status::error(std::string("exception: ") + error.what());
    } catch (...) {
      status = Status::error("unknown exception");
    }
    if (!status)
      abort(rank, status.message());
    results[rank] = std::move(status);
  };
  if (size() == 1) {
    rankMain(0);
  } else {
    std::vector<std::thread> threads;
    for (int rank = 0; rank < size(); ++rank)
      threads.emplace_back(rankMain, rank);
    for (std::thread &thread : threads)
      thread.join();
  }
  int first = failedRank();
  if (first < 0)
    return {};
  if (results[first].ok()) // it called abort() itself: the reason names it
    return Status::error(failure());
  const std::string &message = results[first].message();
  return Status::error(size() > 1 ? "rank " + std::to_string(first) + ": " + message : message);
}

} // namespace shardc::rt::comm
