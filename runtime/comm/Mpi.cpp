//===- Mpi.cpp - the Communicator on MPI ----------------------------------===//
#include "runtime/comm/Mpi.h"

#include "runtime/comm/Reduction.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace shardc::rt::comm {

struct MpiSession::Watchdog {
  using Clock = std::chrono::steady_clock;

  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
  }

  void arm(std::chrono::milliseconds limit, std::function<void(const std::string &)> handler) {
    std::lock_guard<std::mutex> lock(mutex);
    timeout = limit;
    onTimeout = std::move(handler);
    if (!thread.joinable() && timeout.count() > 0)
      thread = std::thread([this] { loop(); });
  }

  void begin(const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    operation = name;
    started = Clock::now();
    active = true;
  }

  void end() {
    std::lock_guard<std::mutex> lock(mutex);
    active = false;
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stop) {
      wake.wait_for(lock, std::chrono::milliseconds(100));
      if (stop || !active || timeout.count() <= 0 || Clock::now() - started < timeout)
        continue;
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g s", timeout.count() / 1000.0);
      std::string message = "rank " + std::to_string(worldRank) + ": " + operation +
                            " timed out after " + limit + " (another rank stopped taking part)";
      auto handler = onTimeout;
      active = false;
      lock.unlock();
      if (handler)
        handler(message);
      lock.lock();
    }
  }

  std::mutex mutex;
  std::condition_variable wake;
  std::thread thread;
  bool stop = false, active = false;
  std::chrono::milliseconds timeout{0};
  std::function<void(const std::string &)> onTimeout;
  std::string operation;
  Clock::time_point started;
  int worldRank = 0;
};

namespace {

using Watchdog = MpiSession::Watchdog;

/// Marks one MPI call for the watchdog.
class Watched {
public:
  Watched(Watchdog &watchdog, const char *name) : watchdog_(watchdog) { watchdog_.begin(name); }
  ~Watched() { watchdog_.end(); }

private:
  Watchdog &watchdog_;
};

Status check(int code, const char *what) {
  if (code == MPI_SUCCESS)
    return {};
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Status::error(std::string(what) + ": MPI error: " + std::string(text, length));
}

/// MPI counts are ints; the data-movement collectives take one block per rank.
Status fitsInt(size_t count, const char *what) {
  if (count > static_cast<size_t>(INT_MAX))
    return Status::error(std::string(what) + ": " + std::to_string(count) +
                         " bytes per rank is more than MPI's int count allows");
  return {};
}

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  default:
    return MPI_FLOAT; // F32, and F16/BF16 once widened
  }
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MPI_Comm comm, std::shared_ptr<Watchdog> watchdog)
      : comm_(comm), watchdog_(std::move(watchdog)) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    Watched watched(*watchdog_, "send (finishing at exit)");
    (void)reapSends(true);
    MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduceSum(void *data, size_t count, DType dtype) override {
    if (Status status = checkSummable(dtype, "all_reduce"); !status)
      return status;
    Watched watched(*watchdog_, "all_reduce");
    if (isHalfType(dtype)) {
      std::vector<float> wide = widen(data, count, dtype);
      if (Status status = allReduceChunks(wide.data(), count, MPI_FLOAT, sizeof(float)); !status)
        return status;
      narrow(wide.data(), data, count, dtype);
      return {};
    }
    return allReduceChunks(data, count, mpiType(dtype), dtypeSize(dtype));
  }

  Status allGather(const void *in, void *out, size_t bytesPerRank) override {
    if (Status status = fitsInt(bytesPerRank, "all_gather"); !status)
      return status;
    Watched watched(*watchdog_, "all_gather");
    const void *send =
        in == static_cast<std::byte *>(out) + rank_ * bytesPerRank ? MPI_IN_PLACE : in;
    int count = static_cast<int>(bytesPerRank);
    return check(MPI_Allgather(send, count, MPI_BYTE, out, count, MPI_BYTE, comm_), "all_gather");
  }

  // Each rank's rows arrive as one element of a strided type: `rows` runs
  // of rowBytes, size() rows apart, resized so that rank i's element starts
  // at row i. MPI places them; nothing is staged.
  Status allGatherRows(const void *in, void *out, size_t rows, size_t rowBytes) override {
    if (Status status = fitsInt(rows * rowBytes, "all_gather"); !status)
      return status;
    if (Status status = fitsInt(rowBytes * size_, "all_gather"); !status)
      return status;
    Watched watched(*watchdog_, "all_gather");
    const int count = static_cast<int>(rows), row = static_cast<int>(rowBytes);
    MPI_Datatype strided = MPI_DATATYPE_NULL, placed = MPI_DATATYPE_NULL;
    if (Status status =
            check(MPI_Type_vector(count, row, row * size_, MPI_BYTE, &strided), "all_gather");
        !status)
      return status;
    Status status = check(MPI_Type_create_resized(strided, 0, row, &placed), "all_gather");
    MPI_Type_free(&strided);
    if (!status)
      return status;
    status = check(MPI_Type_commit(&placed), "all_gather");
    if (status)
      status = check(MPI_Allgather(in, count * row, MPI_BYTE, out, 1, placed, comm_), "all_gather");
    MPI_Type_free(&placed);
    return status;
  }

  Status gather(const void *in, void *out, size_t bytesPerRank, int root) override {
    if (Status status = fitsInt(bytesPerRank, "gather"); !status)
      return status;
    Watched watched(*watchdog_, "gather");
    const void *send = rank_ == root && in == static_cast<std::byte *>(out) + rank_ * bytesPerRank
                           ? MPI_IN_PLACE
                           : in;
    int count = static_cast<int>(bytesPerRank);
    return check(MPI_Gather(send, count, MPI_BYTE, out, count, MPI_BYTE, root, comm_), "gather");
  }

  Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) override {
    if (Status status = checkSummable(dtype, "reduce_scatter"); !status)
      return status;
    if (Status status = fitsInt(countPerRank, "reduce_scatter"); !status)
      return status;
    Watched watched(*watchdog_, "reduce_scatter");
    int count = static_cast<int>(countPerRank);
    if (isHalfType(dtype)) {
      std::vector<float> wide = widen(in, countPerRank * size_, dtype);
      std::vector<float> mine(countPerRank);
      if (Status status = check(
              MPI_Reduce_scatter_block(wide.data(), mine.data(), count, MPI_FLOAT, MPI_SUM, comm_),
              "reduce_scatter");
          !status)
        return status;
      narrow(mine.data(), out, countPerRank, dtype);
      return {};
    }
    return check(MPI_Reduce_scatter_block(in, out, count, mpiType(dtype), MPI_SUM, comm_),
                 "reduce_scatter");
  }

  Status allToAll(const void *in, void *out, size_t bytesPerRank) override {
    if (Status status = fitsInt(bytesPerRank, "all_to_all"); !status)
      return status;
    Watched watched(*watchdog_, "all_to_all");
    int count = static_cast<int>(bytesPerRank);
    return check(MPI_Alltoall(in, count, MPI_BYTE, out, count, MPI_BYTE, comm_), "all_to_all");
  }

  Status allToAllV(const void *in, const size_t *sendBytes, void *out,
                   const size_t *recvBytes) override {
    if (Status status = intLayout(sendBytes, sendCounts_, sendOffsets_, "sends"); !status)
      return status;
    if (Status status = intLayout(recvBytes, recvCounts_, recvOffsets_, "receives"); !status)
      return status;
    Watched watched(*watchdog_, "all_to_all_v");
    return check(MPI_Alltoallv(in, sendCounts_.data(), sendOffsets_.data(), MPI_BYTE, out,
                               recvCounts_.data(), recvOffsets_.data(), MPI_BYTE, comm_),
                 "all_to_all_v");
  }

  Status broadcast(void *data, size_t bytes, int root) override {
    if (root < 0 || root >= size_)
      return Status::error("broadcast: root " + std::to_string(root) + " is not a rank of the " +
                           std::to_string(size_) + "-rank group");
    Watched watched(*watchdog_, "broadcast");
    auto *begin = static_cast<std::byte *>(data);
    for (size_t done = 0; done < bytes;) {
      int chunk = static_cast<int>(std::min<size_t>(bytes - done, INT_MAX));
      if (Status status = check(MPI_Bcast(begin + done, chunk, MPI_BYTE, root, comm_), "broadcast");
          !status)
        return status;
      done += chunk;
    }
    return {};
  }

  // Buffered, like the in-process world's: the bytes are copied and sent
  // without waiting, so a send returns before the peer receives and a ring
  // of sends-then-receives cannot deadlock on MPI's rendezvous protocol.
  // But at most kSendsInFlight per peer: past them a send waits for the
  // peer to take the oldest, under the watchdog, so a peer that stopped
  // receiving fails the sender at the timeout rather than growing its
  // memory without end. MPI_Issend, not MPI_Isend: it completes only once
  // the peer's receive matched it, where a small MPI_Isend completes at once
  // and leaves its bytes queued in MPI's buffers. Finished sends are reaped
  // here and the rest waited for at destruction.
  Status send(const void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "send"); !status)
      return status;
    Watched watched(*watchdog_, "send");
    if (Status status = reapSends(false); !status)
      return status;
    const auto *begin = static_cast<const std::byte *>(data);
    size_t done = 0;
    do { // a zero-byte message still matches the peer's receive
      if (Status status = waitForRoom(peer); !status)
        return status;
      int chunk = static_cast<int>(std::min<size_t>(bytes - done, INT_MAX));
      pending_.push_back(
          {MPI_REQUEST_NULL, peer, std::vector<std::byte>(begin + done, begin + done + chunk)});
      PendingSend &send = pending_.back();
      if (Status status = check(
              MPI_Issend(send.bytes.data(), chunk, MPI_BYTE, peer, kTag, comm_, &send.request),
              "send");
          !status)
        return status;
      done += chunk;
    } while (done < bytes);
    return {};
  }

  Status recv(void *data, size_t bytes, int peer) override {
    if (Status status = checkPeer(peer, "recv"); !status)
      return status;
    Watched watched(*watchdog_, "recv");
    auto *begin = static_cast<std::byte *>(data);
    size_t done = 0;
    do {
      int chunk = static_cast<int>(std::min<size_t>(bytes - done, INT_MAX));
      MPI_Status status;
      if (Status error =
              check(MPI_Recv(begin + done, chunk, MPI_BYTE, peer, kTag, comm_, &status), "recv");
          !error)
        return error;
      int received = 0;
      MPI_Get_count(&status, MPI_BYTE, &received);
      if (received != chunk)
        return Status::error("recv: received " + std::to_string(received) +
                             " bytes from group rank " + std::to_string(peer) + ", expected " +
                             std::to_string(chunk) + " (the ranks disagree on the size)");
      done += chunk;
    } while (done < bytes);
    return {};
  }

  StatusOr<std::unique_ptr<Communicator>> split(int color, int key) override {
    Watched watched(*watchdog_, "split");
    MPI_Comm child = MPI_COMM_NULL;
    if (Status status =
            check(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child), "split");
        !status)
      return status;
    if (child == MPI_COMM_NULL)
      return std::unique_ptr<Communicator>();
    return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(child, watchdog_));
  }

  void abort(const std::string &) override { MpiSession::abortJob(1); }

private:
  static constexpr int kTag = 0;
  /// Sends to one peer that it has not received yet, at most. A pipeline
  /// link carries two messages per transfer (its tag, its bytes) and its
  /// schedule keeps a few micro-batches in flight (2P-1 at most, ZB-H2), so
  /// this leaves room for any schedule's, while bounding the memory a
  /// stopped peer holds up.
  static constexpr size_t kSendsInFlight = 256;

  Status checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size_)
      return Status::error(std::string(what) + ": peer " + std::to_string(peer) +
                           " is not a rank of the " + std::to_string(size_) + "-rank group");
    return {};
  }

  struct PendingSend {
    MPI_Request request;
    int peer;
    std::vector<std::byte> bytes;
  };

  /// Waits, oldest first, until fewer than kSendsInFlight sends to `peer`
  /// are not received yet.
  Status waitForRoom(int peer) {
    size_t inFlight = std::count_if(pending_.begin(), pending_.end(),
                                    [&](const PendingSend &send) { return send.peer == peer; });
    for (auto send = pending_.begin(); inFlight >= kSendsInFlight;) {
      if (send->peer != peer) {
        ++send;
        continue;
      }
      if (Status status = check(MPI_Wait(&send->request, MPI_STATUS_IGNORE), "send"); !status)
        return status;
      send = pending_.erase(send);
      --inFlight;
    }
    return {};
  }

  /// Forgets the sends that are done (all of them, waiting, with `wait`).
  Status reapSends(bool wait) {
    Status result;
    for (auto send = pending_.begin(); send != pending_.end();) {
      int done = 0;
      int code = wait ? MPI_Wait(&send->request, MPI_STATUS_IGNORE)
                      : MPI_Test(&send->request, &done, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS)
        return check(code, "send");
      if (wait || done)
        send = pending_.erase(send);
      else
        ++send;
    }
    return result;
  }

  /// MPI_Alltoallv's int counts and displacements of blocks packed in rank
  /// order, into vectors kept from call to call. MPI 4's large-count
  /// MPI_Alltoallv_c is not in the OpenMPI 4 this builds with, so a layout
  /// past INT_MAX bytes is refused rather than sent in pieces.
  Status intLayout(const size_t *bytes, std::vector<int> &counts, std::vector<int> &offsets,
                   const char *direction) {
    counts.resize(size_);
    offsets.resize(size_);
    size_t offset = 0;
    for (int peer = 0; peer < size_; ++peer) {
      if (bytes[peer] > static_cast<size_t>(INT_MAX) || offset > static_cast<size_t>(INT_MAX))
        return Status::error("all_to_all_v: this rank " + std::string(direction) + " " +
                             std::to_string(bytes[peer]) + " bytes at byte offset " +
                             std::to_string(offset) + " for group rank " + std::to_string(peer) +
                             ", past the INT_MAX bytes MPI's int counts and displacements allow");
      counts[peer] = static_cast<int>(bytes[peer]);
      offsets[peer] = static_cast<int>(offset);
      offset += bytes[peer];
    }
    return {};
  }

  Status allReduceChunks(void *data, size_t count, MPI_Datatype type, size_t element) {
    auto *begin = static_cast<std::byte *>(data);
    for (size_t done = 0; done < count;) {
      int chunk = static_cast<int>(std::min<size_t>(count - done, INT_MAX));
      if (Status status = check(
              MPI_Allreduce(MPI_IN_PLACE, begin + done * element, chunk, type, MPI_SUM, comm_),
              "all_reduce");
          !status)
        return status;
      done += chunk;
    }
    return {};
  }

  MPI_Comm comm_;
  std::shared_ptr<Watchdog> watchdog_;
  int rank_ = 0, size_ = 1;
  std::list<PendingSend> pending_;
  // allToAllV's MPI layout, reused by every call.
  std::vector<int> sendCounts_, sendOffsets_, recvCounts_, recvOffsets_;
};

} // namespace

bool launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

StatusOr<std::unique_ptr<MpiSession>> MpiSession::start(int &argc, char **&argv) {
  int provided = 0;
  // The watchdog may call MPI_Abort while the main thread waits in MPI.
  if (Status status =
          check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
      !status)
    return status;
  std::unique_ptr<MpiSession> session(new MpiSession());
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &session->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &session->size_);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
          MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &session->localSize_);
    MPI_Comm_free(&node);
  }
  session->watchdog_ = std::make_shared<Watchdog>();
  session->watchdog_->worldRank = session->rank_;
  return session;
}

MpiSession::~MpiSession() {
  watchdog_.reset(); // joins its thread; communicators hold it too, and are gone by now
  MPI_Finalize();
}

StatusOr<std::unique_ptr<Communicator>> MpiSession::world() {
  MPI_Comm comm = MPI_COMM_NULL;
  if (Status status = check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), "MPI_Comm_dup"); !status)
    return status;
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return std::unique_ptr<Communicator>(std::make_unique<MpiCommunicator>(comm, watchdog_));
}

void MpiSession::setTimeout(std::chrono::milliseconds timeout,
                            std::function<void(const std::string &)> onTimeout) {
  watchdog_->arm(timeout, std::move(onTimeout));
}

void MpiSession::abortJob(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code); // MPI_Abort does not return; this keeps [[noreturn]] honest
}

} // namespace shardc::rt::comm
