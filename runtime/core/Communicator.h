//===- Communicator.h - a group of ranks and its collectives ----*- C++ -*-===//
//
// After MPI's communicators and NCCL's: one object per group of ranks per
// rank, with the collectives the compiler's SPMD programs use. Every member
// calls the same collectives in the same order with the same sizes (the
// programs are identical); a collective returns once this rank's part is done.
//
// Implementations: runtime/comm/InProcess (ranks as threads of one process,
// for `shardrun --np N` and the tests), runtime/comm/Mpi (processes under
// mpirun) and runtime/comm/Nccl (one GPU per process). The executor binds one
// per distinct `mesh_axes` of a program's collective steps
// (runtime/core/Executor.cpp); the kernels that use them are
// runtime/cpu/Collectives.cpp and runtime/cuda/Collectives.cpp.
//
// Host and device communicators: the in-process and MPI ones take host
// memory and a call returns when this rank's part is done; the NCCL one takes
// device memory and a call only enqueues the work on the stream given by
// setStream(), in order with the kernels launched there. The CUDA kernels
// stage a host communicator's blocks through host memory, so an in-process
// world also serves N ranks on one GPU.
//
// Sums: F32, F64, I32, I64 in their own type (integers wrap around), F16 and
// BF16 accumulated in float and rounded once at the end (NCCL: in their own
// type at every hop, NCCL's way and every framework's, at half the bytes of
// widening). Other element types are an error for the reductions; the
// data-movement collectives take bytes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_COMMUNICATOR_H
#define SHARDC_RUNTIME_CORE_COMMUNICATOR_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace shardc::rt {

class Communicator {
public:
  virtual ~Communicator() = default;
  /// This rank's position in the group, 0 <= rank() < size().
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// `data` (count elements) becomes the elementwise sum over the group.
  virtual Status allReduceSum(void *data, size_t count, DType dtype) = 0;
  /// `out` (size() * bytesPerRank) receives rank i's `in` at block i.
  virtual Status allGather(const void *in, void *out, size_t bytesPerRank) = 0;
  /// allGather of a tensor along a dim that is not its first: `in` holds
  /// `rows` rows of `rowBytes`, and row o of rank i lands at row
  /// o * size() + i of `out`. By default (host memory only) allGather into
  /// scratch memory, then a reorder; the in-process world copies each row
  /// from its owner in place, MPI receives into a strided datatype.
  virtual Status allGatherRows(const void *in, void *out, size_t rows, size_t rowBytes);
  /// `in` holds size() blocks of countPerRank elements; rank i's `out` gets
  /// the sum over the group of block i.
  virtual Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) = 0;
  /// `in` block j goes to rank j; `out` block i comes from rank i.
  virtual Status allToAll(const void *in, void *out, size_t bytesPerRank) = 0;
  /// allToAll with blocks of any size: `in` holds size() blocks packed in
  /// rank order, block j (sendBytes[j] bytes) going to rank j; `out` receives
  /// rank i's block at the packed position i (recvBytes[i] bytes). Rank i's
  /// sendBytes[j] must equal rank j's recvBytes[i]; zero-byte blocks are fine.
  virtual Status allToAllV(const void *in, const size_t *sendBytes, void *out,
                           const size_t *recvBytes) = 0;
  /// Every rank's `data` becomes rank `root`'s.
  virtual Status broadcast(void *data, size_t bytes, int root) = 0;
  /// Rank `root`'s `out` (size() * bytesPerRank) receives rank i's `in` at
  /// block i; `out` is not touched elsewhere. By default point to point
  /// (the others send, the root receives in rank order; on a device
  /// communicator the root's `in` must be its block of `out`); the
  /// in-process world copies from the peers' buffers in place, MPI calls
  /// MPI_Gather.
  virtual Status gather(const void *in, void *out, size_t bytesPerRank, int root);
  /// Point to point, matched in order per (sender, receiver) pair. A send is
  /// buffered: it returns without waiting for the receive (so a ring of
  /// sends, then receives, cannot deadlock); `data` may be reused at once.
  /// MPI bounds the sends a peer has not received yet (runtime/comm/Mpi.cpp):
  /// past them a send waits, and times out if the peer stopped receiving.
  virtual Status send(const void *data, size_t bytes, int peer) = 0;
  virtual Status recv(void *data, size_t bytes, int peer) = 0;
  /// send() of a message that carries its identity, `tag`, in a small
  /// message of its own ahead of the bytes: still matched in order per pair,
  /// but recvTagged checks the tag before it takes the bytes, so ranks that
  /// disagree on the order fail instead of reading one message as another
  /// (a pipeline's transfers, runtime/session/PipelineRank.cpp). Host
  /// memory only.
  Status sendTagged(const void *data, size_t bytes, int peer, uint64_t tag);
  /// Receives the next message sendTagged sent from `peer` if it carries
  /// `tag`; otherwise an error "expected NAME(tag) from ...; got
  /// NAME(arrived)", its bytes left unread.
  Status recvTagged(void *data, size_t bytes, int peer, uint64_t tag,
                    const std::function<std::string(uint64_t tag)> &name);

  /// Collective over this group: the ranks that give the same `color` form a
  /// new group, ordered by `key` (then by rank here). A negative color takes
  /// no part and gets a null communicator.
  virtual StatusOr<std::unique_ptr<Communicator>> split(int color, int key) = 0;

  /// This rank failed with `reason` and will not take part again: the other
  /// ranks' pending and later operations fail (in-process) or the job ends
  /// (MPI_Abort; NCCL: every communicator of the world is aborted, which
  /// the peers' NCCL sees) instead of waiting for it.
  virtual void abort(const std::string &reason) = 0;

  /// Whether the buffers are device memory and the calls enqueue on a stream
  /// (see the top of this file); false for the host communicators.
  virtual bool onDevice() const { return false; }
  /// The stream (a cudaStream_t) the later calls of a device communicator
  /// enqueue on; ignored by the host communicators.
  virtual void setStream(void *stream) { (void)stream; }
  /// Issues work held back: the NCCL communicator defers a send (a copy of
  /// its bytes) to the next receive or collective, so that a ring of sends
  /// and then receives cannot deadlock on GPU-blocking sends. The executor
  /// calls it on every group at the end of a run; a no-op elsewhere.
  virtual Status flush() { return {}; }
};

/// Host memory: n blocks of `outer` rows of `row` bytes each, laid out block
/// by block, become `outer` rows of n blocks (row o of block j lands at row
/// o * n + j): a gather along a dim that is not the first.
void interleaveBlocks(const std::byte *blocks, std::byte *rows, size_t n, size_t outer, size_t row);

} // namespace shardc::rt

#endif
