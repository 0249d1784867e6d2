//===- StreamGroup.h - a communicator as seen from a stream -----*- C++ -*-===//
//
// The CUDA kernels that talk to their group (the collectives, the routed
// experts' exchanges) hand it device pointers whatever the communicator.
// Through a device communicator (NCCL) the blocks go straight from device
// memory, enqueued on the stream. Through a host communicator (the in-process
// world of `shardrun --np N` on one GPU, or MPI) they are staged: copied to
// pinned host memory (StreamScratch.h), the stream waited for, the host
// collective run, and the result copied back in stream order. Staging costs
// two PCIe copies and a stream synchronization per call, which is fine for
// what it serves (checking sharded programs on one GPU; CUDA-unaware MPI)
// and keeps the sums those of the host communicators (F16/BF16 in float,
// rounded once).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_STREAMGROUP_H
#define SHARDC_RUNTIME_CUDA_STREAMGROUP_H

#include "runtime/core/Communicator.h"

#include <cuda_runtime_api.h>

namespace shardc::rt::cuda {

/// A stream-ordered copy of `bytes`, skipping empty and self copies.
Status copyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind kind,
                 cudaStream_t stream);

/// A step's group on its stream: Communicator's calls with device operands.
/// Every staged call waits for the stream before the host touches the pinned
/// memory, so the copy back queued by the previous call is done by then.
class StreamGroup {
public:
  StreamGroup(Communicator &group, cudaStream_t stream);

  Status allReduceSum(const void *in, void *out, size_t count, DType dtype);
  Status allGather(const void *in, void *out, size_t bytesPerRank);
  Status reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype);
  Status allToAll(const void *in, void *out, size_t bytesPerRank);
  /// Communicator::allToAllV: blocks of any size, packed in rank order.
  Status allToAllV(const void *in, const size_t *sendBytes, void *out, const size_t *recvBytes);
  Status broadcast(void *data, size_t bytes, int root);
  Status send(const void *data, size_t bytes, int peer);
  Status recv(void *data, size_t bytes, int peer);

  /// allGather of a few values in host memory (the routed experts' counts),
  /// done when it returns: a device communicator's go through device memory
  /// and the stream is waited for.
  Status allGatherOnHost(const void *in, void *out, size_t bytesPerRank);

private:
  /// Device `in` to pinned memory, the host collective `run(hostIn,
  /// hostOut)`, pinned memory to device `out`. With `inPlace` the host
  /// collective works in the first region alone and the result comes from it.
  template <typename Run>
  Status staged(const void *in, size_t inBytes, void *out, size_t outBytes, Run run,
                bool inPlace = false);

  Communicator &group_;
  cudaStream_t stream_;
};

} // namespace shardc::rt::cuda

#endif
