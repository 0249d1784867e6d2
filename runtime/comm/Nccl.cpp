//===- Nccl.cpp - the Communicator on NCCL, one GPU per rank --------------===//
#include "runtime/comm/Nccl.h"

#include "runtime/comm/NcclWatchdog.h"
#include "runtime/comm/Reduction.h"

#include <cstdio>
#include <vector>

namespace shardc::rt::comm {
namespace {

static_assert(sizeof(ncclUniqueId) == kNcclIdBytes, "NCCL's unique id changed size");

/// What the communicators of one world share.
struct World {
  World(const NcclOptions &options)
      : watchdog(options.rank, options.device, options.timeout, options.history,
                 options.onFailure) {}
  NcclWatchdog watchdog;
  /// Groups are numbered in the order they are made, the same on every rank
  /// (the executor splits in program order): 0 is the world.
  int groups = 0;
};

StatusOr<ncclDataType_t> summable(DType dtype, const char *collective) {
  if (Status status = checkSummable(dtype, collective); !status)
    return status;
  switch (dtype) {
  case DType::F64:
    return ncclFloat64;
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  default:
    return ncclFloat32;
  }
}

std::string describeBytes(size_t bytes) {
  char text[32];
  if (bytes < 1024)
    std::snprintf(text, sizeof text, "%zu B", bytes);
  else if (bytes < (1 << 20))
    std::snprintf(text, sizeof text, "%.1f KB", bytes / 1024.0);
  else
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1048576.0);
  return text;
}

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(std::shared_ptr<World> world, ncclComm_t comm, int group, int rank, int size)
      : world_(std::move(world)), comm_(comm), group_(group), rank_(rank), size_(size) {}

  ~NcclCommunicator() override {
    for (const PendingSend &send : pending_) // never flushed: nobody will receive them
      (void)cudaFree(send.copy);
    NcclWatchdog &watchdog = world_->watchdog;
    {
      auto guard = watchdog.lock();
      if (watchdog.failed())
        return; // aborted with the whole world
      watchdog.remove(comm_);
      ncclResult_t result = ncclCommFinalize(comm_);
      if (result != ncclSuccess && result != ncclInProgress) {
        (void)ncclCommAbort(comm_);
        return;
      }
    }
    // Finalize flushes what is in flight; a peer that never finishes it
    // fails the world after the timeout, and the communicator is aborted.
    if (!watchdog.waitReady(comm_, "finalizing group " + std::to_string(group_))) {
      auto guard = watchdog.lock();
      (void)ncclCommAbort(comm_);
      return;
    }
    auto guard = watchdog.lock();
    (void)ncclCommDestroy(comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool onDevice() const override { return true; }
  void setStream(void *stream) override { stream_ = static_cast<cudaStream_t>(stream); }

  Status allReduceSum(void *data, size_t count, DType dtype) override {
    auto type = summable(dtype, "all_reduce");
    if (!type)
      return type.status();
    if (!count)
      return {};
    return collective("all_reduce", count * dtypeSize(dtype), dtypeName(dtype), [&] {
      return ncclAllReduce(data, data, count, *type, ncclSum, comm_, stream_);
    });
  }

  Status allGather(const void *in, void *out, size_t bytesPerRank) override {
    if (!bytesPerRank)
      return {};
    return collective("all_gather", bytesPerRank * size_, nullptr, [&] {
      return ncclAllGather(in, out, bytesPerRank, ncclUint8, comm_, stream_);
    });
  }

  Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) override {
    auto type = summable(dtype, "reduce_scatter");
    if (!type)
      return type.status();
    if (!countPerRank)
      return {};
    return collective(
        "reduce_scatter", countPerRank * size_ * dtypeSize(dtype), dtypeName(dtype),
        [&] { return ncclReduceScatter(in, out, countPerRank, *type, ncclSum, comm_, stream_); });
  }

  Status allToAll(const void *in, void *out, size_t bytesPerRank) override {
    if (!bytesPerRank)
      return {};
    return collective("all_to_all", bytesPerRank * size_, nullptr, [&]() -> ncclResult_t {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      return ncclAlltoAll(in, out, bytesPerRank, ncclUint8, comm_, stream_);
#else
      const auto *send = static_cast<const char *>(in);
      auto *receive = static_cast<char *>(out);
      ncclGroupStart();
      for (int peer = 0; peer < size_; ++peer) {
        ncclSend(send + peer * bytesPerRank, bytesPerRank, ncclUint8, peer, comm_, stream_);
        ncclRecv(receive + peer * bytesPerRank, bytesPerRank, ncclUint8, peer, comm_, stream_);
      }
      return ncclGroupEnd();
#endif
    });
  }

  // One group of a send and a receive per peer. Empty blocks are left out
  // on both sides (rank i's sendBytes[j] is rank j's recvBytes[i]).
  Status allToAllV(const void *in, const size_t *sendBytes, void *out,
                   const size_t *recvBytes) override {
    size_t sent = 0, received = 0;
    for (int peer = 0; peer < size_; ++peer) {
      sent += sendBytes[peer];
      received += recvBytes[peer];
    }
    if (!sent && !received)
      return {};
    return collective("all_to_all_v", sent, nullptr, [&] {
      const auto *send = static_cast<const char *>(in);
      auto *receive = static_cast<char *>(out);
      ncclGroupStart();
      for (int peer = 0; peer < size_; ++peer) {
        if (sendBytes[peer])
          ncclSend(send, sendBytes[peer], ncclUint8, peer, comm_, stream_);
        if (recvBytes[peer])
          ncclRecv(receive, recvBytes[peer], ncclUint8, peer, comm_, stream_);
        send += sendBytes[peer];
        receive += recvBytes[peer];
      }
      return ncclGroupEnd();
    });
  }

  Status broadcast(void *data, size_t bytes, int root) override {
    if (root < 0 || root >= size_)
      return Status::error("broadcast: root " + std::to_string(root) + " is not a rank of the " +
                           std::to_string(size_) + "-rank group");
    if (!bytes)
      return {};
    return collective("broadcast from " + std::to_string(root), bytes, nullptr, [&] {
      return ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_);
    });
  }

  // A copy of the bytes, made in stream order now and sent later (Nccl.h).
  Status send(const void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "send"); !status)
      return status;
    if (!bytes)
      return {};
    PendingSend send{nullptr, bytes, peer};
    if (Status status = cudaStatus(cudaMallocAsync(&send.copy, bytes, stream_), "send: copy");
        !status)
      return status;
    pending_.push_back(send);
    return cudaStatus(cudaMemcpyAsync(send.copy, data, bytes, cudaMemcpyDeviceToDevice, stream_),
                      "send: copy");
  }

  Status recv(void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "recv"); !status)
      return status;
    if (!bytes)
      return {};
    return issue("recv " + describeBytes(bytes) + " from " + std::to_string(peer), [&] {
      ncclGroupStart();
      enqueueSends();
      ncclRecv(data, bytes, ncclUint8, peer, comm_, stream_);
      return ncclGroupEnd();
    });
  }

  Status flush() override { return flushSends(); }

  StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override {
    if (Status status = flushSends(); !status)
      return status;
    NcclWatchdog &watchdog = world_->watchdog;
    ncclComm_t child = nullptr;
    int id;
    {
      auto guard = watchdog.lock();
      if (watchdog.failed())
        return watchdog.failure();
      id = ++world_->groups;
      ncclResult_t result =
          ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child, nullptr);
      if (Status status = ncclStatus(result, "split", comm_); !status)
        return status;
    }
    if (Status status = watchdog.waitReady(comm_, "split of group " + std::to_string(group_));
        !status)
      return status;
    if (!child)
      return std::unique_ptr<Communicator>();
    {
      auto guard = watchdog.lock();
      watchdog.add(child, id, 0);
    }
    const std::string what = "set-up of group " + std::to_string(id);
    if (Status status = watchdog.waitReady(child, what); !status)
      return status;
    int rank = 0, size = 0;
    {
      auto guard = watchdog.lock();
      if (Status status = ncclStatus(ncclCommUserRank(child, &rank), what, child); !status)
        return status;
      if (Status status = ncclStatus(ncclCommCount(child, &size), what, child); !status)
        return status;
      watchdog.remove(child);
      watchdog.add(child, id, size);
    }
    return std::unique_ptr<Communicator>(
        std::make_unique<NcclCommunicator>(world_, child, id, rank, size));
  }

  void abort(const std::string &reason) override {
    auto guard = world_->watchdog.lock();
    world_->watchdog.fail("this rank failed: " + reason, false);
  }

private:
  struct PendingSend {
    void *copy;
    size_t bytes;
    int peer;
  };

  Status checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size_)
      return Status::error(std::string(what) + ": peer " + std::to_string(peer) +
                           " is not a rank of the " + std::to_string(size_) + "-rank group");
    return {};
  }

  std::string where() const {
    return "on group " + std::to_string(group_) + " (" + std::to_string(size_) + " ranks)";
  }

  /// A collective: the deferred sends go first, on their own.
  template <typename Enqueue>
  Status collective(const std::string &name, size_t bytes, const char *dtype, Enqueue enqueue) {
    if (Status status = flushSends(); !status)
      return status;
    return issue(name + " " + describeBytes(bytes) + (dtype ? std::string(" ") + dtype : ""),
                 enqueue);
  }

  /// Enqueues under the watchdog's lock, waits until NCCL has the operation
  /// on the stream, and hands it to the watchdog.
  template <typename Enqueue> Status issue(const std::string &what, Enqueue enqueue) {
    NcclWatchdog &watchdog = world_->watchdog;
    const std::string label = what + " " + where();
    ncclResult_t result;
    {
      auto guard = watchdog.lock();
      if (watchdog.failed())
        return watchdog.failure();
      if (Status status = watchdog.begin(stream_, label); !status)
        return status;
      result = enqueue();
    }
    if (Status status = ncclStatus(result, label, comm_); !status)
      return status;
    if (result == ncclInProgress)
      if (Status status = watchdog.waitReady(comm_, label); !status)
        return status;
    Status status;
    {
      auto guard = watchdog.lock();
      status = watchdog.end(stream_);
    }
    // The copies of the sends just issued are freed in stream order.
    for (const PendingSend &send : issued_)
      (void)cudaFreeAsync(send.copy, stream_);
    issued_.clear();
    return status;
  }

  /// Inside a group: the deferred sends, which then belong to issued_.
  void enqueueSends() {
    for (const PendingSend &send : pending_)
      ncclSend(send.copy, send.bytes, ncclUint8, send.peer, comm_, stream_);
    issued_.insert(issued_.end(), pending_.begin(), pending_.end());
    pending_.clear();
  }

  Status flushSends() {
    if (pending_.empty())
      return {};
    size_t bytes = 0;
    for (const PendingSend &send : pending_)
      bytes += send.bytes;
    return issue("send " + describeBytes(bytes) + " (" + std::to_string(pending_.size()) +
                     " message(s))",
                 [&] {
                   ncclGroupStart();
                   enqueueSends();
                   return ncclGroupEnd();
                 });
  }

  std::shared_ptr<World> world_;
  ncclComm_t comm_;
  int group_, rank_, size_;
  cudaStream_t stream_ = nullptr;
  std::vector<PendingSend> pending_, issued_;
};

} // namespace

StatusOr<std::unique_ptr<Communicator>> joinNcclWorld(const NcclOptions &options,
                                                      const ShareBytes &share) {
  const std::string me =
      "NCCL set-up of rank " + std::to_string(options.rank) + " of " + std::to_string(options.size);
  if (options.size < 1 || options.rank < 0 || options.rank >= options.size)
    return Status::error(me + ": not a rank of the world");
  if (Status status = cudaStatus(cudaSetDevice(options.device),
                                 "CUDA device " + std::to_string(options.device));
      !status)
    return status;
  ncclUniqueId id{};
  if (options.rank == 0)
    if (Status status = ncclStatus(ncclGetUniqueId(&id), me); !status)
      return status;
  if (Status status = share(&id, sizeof id); !status)
    return status;

  auto world = std::make_shared<World>(options);
  NcclWatchdog &watchdog = world->watchdog;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.commName = "shardc";
  ncclComm_t comm = nullptr;
  {
    auto guard = watchdog.lock();
    ncclResult_t result = ncclCommInitRankConfig(&comm, options.size, id, options.rank, &config);
    if (Status status = ncclStatus(result, me, comm); !status) {
      if (comm)
        (void)ncclCommAbort(comm);
      return status;
    }
    watchdog.add(comm, 0, options.size);
  }
  if (Status status = watchdog.waitReady(comm, me); !status)
    return status;
  return std::unique_ptr<Communicator>(
      std::make_unique<NcclCommunicator>(world, comm, 0, options.rank, options.size));
}

ShareBytes shareThrough(Communicator &host) {
  return [&host](void *data, size_t bytes) { return host.broadcast(data, bytes, 0); };
}

std::string ncclVersion() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess)
    return "unknown";
  // Codes below 2.9 are X*1000 + Y*100 + Z, later ones X*10000 + Y*100 + Z.
  const int major = code >= 20900 ? code / 10000 : code / 1000;
  const int minor = code >= 20900 ? code / 100 % 100 : code / 100 % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

} // namespace shardc::rt::comm
