//===- InProcess.cpp - ranks as threads of one process --------------------===//
#include "runtime/comm/InProcess.h"

#include "runtime/comm/Reduction.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <thread>

namespace shardc::rt::comm {
namespace {

/// Message kinds: point-to-point traffic never matches a collective's.
constexpr int kPointToPoint = 0;
constexpr int kCollective = 1;

/// The longest a receive sleeps before it looks at the world again; abort()
/// wakes it at once, this only bounds the damage of a missed wakeup.
constexpr std::chrono::milliseconds kPollInterval(100);

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

  Status allReduceSum(void *data, size_t count, DType dtype) override {
    if (Status status = checkSummable(dtype, "all_reduce"); !status)
      return status;
    Operation op(*this, "all_reduce");
    if (size() == 1)
      return {};
    // Block i of the ring: elements [i * count / n, (i + 1) * count / n).
    std::vector<size_t> bounds(size() + 1);
    for (int i = 0; i <= size(); ++i)
      bounds[i] = count * i / size();
    if (isHalfType(dtype)) {
      std::vector<float> wide = widen(data, count, dtype);
      if (Status status = ringAllReduce(op, wide.data(), bounds, DType::F32); !status)
        return status;
      narrow(wide.data(), data, count, dtype);
      return {};
    }
    return ringAllReduce(op, data, bounds, dtype);
  }

  Status allGather(const void *in, void *out, size_t bytesPerRank) override {
    Operation op(*this, "all_gather");
    auto *blocks = static_cast<std::byte *>(out);
    copyBytes(blocks + rank_ * bytesPerRank, in, bytesPerRank);
    std::vector<size_t> bounds(size() + 1);
    for (int i = 0; i <= size(); ++i)
      bounds[i] = bytesPerRank * i;
    return ringAllGather(op, blocks, bounds);
  }

  Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) override {
    if (Status status = checkSummable(dtype, "reduce_scatter"); !status)
      return status;
    Operation op(*this, "reduce_scatter");
    const size_t count = countPerRank * size();
    std::vector<size_t> bounds(size() + 1);
    for (int i = 0; i <= size(); ++i)
      bounds[i] = countPerRank * i;
    if (isHalfType(dtype)) {
      std::vector<float> wide = widen(in, count, dtype);
      if (Status status = ringReduceScatter(op, wide.data(), bounds, DType::F32); !status)
        return status;
      narrow(wide.data() + bounds[rank_], out, countPerRank, dtype);
      return {};
    }
    const size_t element = dtypeSize(dtype);
    std::vector<std::byte> partial(count * element);
    copyBytes(partial.data(), in, partial.size());
    if (Status status = ringReduceScatter(op, partial.data(), bounds, dtype); !status)
      return status;
    copyBytes(out, partial.data() + bounds[rank_] * element, countPerRank * element);
    return {};
  }

  // Pairwise exchange: in round s every rank sends to the rank s ahead and
  // receives from the rank s behind, so each pair meets exactly once.
  Status allToAll(const void *in, void *out, size_t bytesPerRank) override {
    Operation op(*this, "all_to_all");
    const auto *send = static_cast<const std::byte *>(in);
    auto *receive = static_cast<std::byte *>(out);
    copyBytes(receive + rank_ * bytesPerRank, send + rank_ * bytesPerRank, bytesPerRank);
    for (int step = 1; step < size(); ++step) {
      int to = (rank_ + step) % size(), from = (rank_ - step + size()) % size();
      if (Status status = op.send(to, send + to * bytesPerRank, bytesPerRank); !status)
        return status;
      if (Status status = op.receive(from, receive + from * bytesPerRank, bytesPerRank); !status)
        return status;
    }
    return {};
  }

  // Binomial tree rooted at `root`: log2(n) rounds instead of n - 1.
  Status broadcast(void *data, size_t bytes, int root) override {
    if (root < 0 || root >= size())
      return Status::error("broadcast: root " + std::to_string(root) + " is not a rank of the " +
                           std::to_string(size()) + "-rank group");
    Operation op(*this, "broadcast");
    const int n = size(), relative = (rank_ - root + n) % n;
    int mask = 1;
    for (; mask < n; mask <<= 1)
      if (relative & mask) {
        if (Status status = op.receive((relative - mask + root) % n, data, bytes); !status)
          return status;
        break;
      }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (relative + mask < n)
        if (Status status = op.send((relative + mask + root) % n, data, bytes); !status)
          return status;
    return {};
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
    Operation(InProcessCommunicator &self, const char *name, int kind = kCollective)
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

  Status checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size())
      return Status::error(std::string(what) + ": peer " + std::to_string(peer) +
                           " is not a rank of the " + std::to_string(size()) + "-rank group");
    return {};
  }

  int right() const { return (rank_ + 1) % size(); }
  int left() const { return (rank_ - 1 + size()) % size(); }

  // Ring reduce-scatter over the blocks [bounds[i], bounds[i+1]) of `data`
  // (elements of `dtype`): in step s each rank passes its partial sum of
  // block rank-s-1 to the right and adds the left neighbour's partial sum of
  // block rank-s-2 into its own. After n-1 steps rank r holds the full sum of
  // block r (the other blocks hold partial sums).
  Status ringReduceScatter(Operation &op, void *data, const std::vector<size_t> &bounds,
                           DType dtype) {
    const int n = size();
    const size_t element = dtypeSize(dtype);
    auto *bytes = static_cast<std::byte *>(data);
    size_t largest = 0;
    for (int i = 0; i < n; ++i)
      largest = std::max(largest, bounds[i + 1] - bounds[i]);
    std::vector<std::byte> incoming(largest * element);
    for (int step = 0; step + 1 < n; ++step) {
      int out = (rank_ - step - 1 + 2 * n) % n, in = (rank_ - step - 2 + 2 * n) % n;
      if (Status status = op.send(right(), bytes + bounds[out] * element,
                                  (bounds[out + 1] - bounds[out]) * element);
          !status)
        return status;
      size_t count = bounds[in + 1] - bounds[in];
      if (Status status = op.receive(left(), incoming.data(), count * element); !status)
        return status;
      addInto(bytes + bounds[in] * element, incoming.data(), count, dtype);
    }
    return {};
  }

  // Ring all-gather of byte blocks [bounds[i], bounds[i+1]): rank r starts
  // with block r and in step s forwards block r-s, receiving block r-s-1.
  Status ringAllGather(Operation &op, std::byte *data, const std::vector<size_t> &bounds) {
    const int n = size();
    for (int step = 0; step + 1 < n; ++step) {
      int out = (rank_ - step + n) % n, in = (rank_ - step - 1 + n) % n;
      if (Status status = op.send(right(), data + bounds[out], bounds[out + 1] - bounds[out]);
          !status)
        return status;
      if (Status status = op.receive(left(), data + bounds[in], bounds[in + 1] - bounds[in]);
          !status)
        return status;
    }
    return {};
  }

  Status ringAllReduce(Operation &op, void *data, const std::vector<size_t> &elementBounds,
                       DType dtype) {
    if (Status status = ringReduceScatter(op, data, elementBounds, dtype); !status)
      return status;
    std::vector<size_t> byteBounds(elementBounds);
    for (size_t &bound : byteBounds)
      bound *= dtypeSize(dtype);
    return ringAllGather(op, static_cast<std::byte *>(data), byteBounds);
  }

  InProcessWorld &world_;
  uint64_t context_;
  std::vector<int> members_; // world rank of each group rank
  int rank_;
  uint64_t splits_ = 0;
};

} // namespace

InProcessWorld::InProcessWorld(int ranks, std::chrono::milliseconds timeout)
    : timeoutMs_(timeout.count()) {
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

uint64_t InProcessWorld::contextOf(uint64_t parent, uint64_t sequence, int color) {
  std::lock_guard<std::mutex> lock(contextMutex_);
  auto [entry, inserted] = contexts_.try_emplace({parent, sequence, color}, nextContext_);
  if (inserted)
    ++nextContext_;
  return entry->second;
}

Status InProcessWorld::run(const std::function<Status(int rank, Communicator &world)> &body) {
  std::vector<Status> results(mailboxes_.size());
  auto rankMain = [&](int rank) {
    std::unique_ptr<Communicator> world = communicator(rank);
    Status status;
    try {
      status = body(rank, *world);
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
