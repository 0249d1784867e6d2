//===- StreamGroup.cpp - a communicator as seen from a stream -------------===//
#include "runtime/cuda/StreamGroup.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/StreamScratch.h"

namespace shardc::rt::cuda {

Status copyAsync(void *to, const void *from, size_t bytes, cudaMemcpyKind kind,
                 cudaStream_t stream) {
  if (bytes && to != from)
    SHARDC_CUDA_TRY(cudaMemcpyAsync(to, from, bytes, kind, stream));
  return {};
}

StreamGroup::StreamGroup(Communicator &group, cudaStream_t stream)
    : group_(group), stream_(stream) {
  if (group_.onDevice())
    group_.setStream(stream_);
}

template <typename Run>
Status StreamGroup::staged(const void *in, size_t inBytes, void *out, size_t outBytes, Run run,
                           bool inPlace) {
  auto host = hostScratch(stream_, inBytes, inPlace ? 0 : outBytes);
  if (!host)
    return host.status();
  auto [hostIn, hostOut] = *host;
  if (inPlace)
    hostOut = hostIn;
  if (Status status = copyAsync(hostIn, in, inBytes, cudaMemcpyDeviceToHost, stream_); !status)
    return status;
  SHARDC_CUDA_TRY(cudaStreamSynchronize(stream_));
  if (Status status = run(hostIn, hostOut); !status)
    return status;
  return copyAsync(out, hostOut, outBytes, cudaMemcpyHostToDevice, stream_);
}

Status StreamGroup::allReduceSum(const void *in, void *out, size_t count, DType dtype) {
  const size_t bytes = count * dtypeSize(dtype);
  if (group_.onDevice()) {
    if (Status status = copyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream_); !status)
      return status;
    return group_.allReduceSum(out, count, dtype);
  }
  return staged(
      in, bytes, out, bytes,
      [&](std::byte *host, std::byte *) { return group_.allReduceSum(host, count, dtype); }, true);
}

Status StreamGroup::allGather(const void *in, void *out, size_t bytesPerRank) {
  if (group_.onDevice())
    return group_.allGather(in, out, bytesPerRank);
  return staged(in, bytesPerRank, out, bytesPerRank * group_.size(),
                [&](std::byte *hostIn, std::byte *hostOut) {
                  return group_.allGather(hostIn, hostOut, bytesPerRank);
                });
}

Status StreamGroup::reduceScatterSum(const void *in, void *out, size_t countPerRank, DType dtype) {
  if (group_.onDevice())
    return group_.reduceScatterSum(in, out, countPerRank, dtype);
  const size_t bytes = countPerRank * dtypeSize(dtype);
  return staged(in, bytes * group_.size(), out, bytes, [&](std::byte *hostIn, std::byte *hostOut) {
    return group_.reduceScatterSum(hostIn, hostOut, countPerRank, dtype);
  });
}

Status StreamGroup::allToAll(const void *in, void *out, size_t bytesPerRank) {
  if (group_.onDevice())
    return group_.allToAll(in, out, bytesPerRank);
  const size_t bytes = bytesPerRank * group_.size();
  return staged(in, bytes, out, bytes, [&](std::byte *hostIn, std::byte *hostOut) {
    return group_.allToAll(hostIn, hostOut, bytesPerRank);
  });
}

Status StreamGroup::allToAllV(const void *in, const size_t *sendBytes, void *out,
                              const size_t *recvBytes) {
  if (group_.onDevice())
    return group_.allToAllV(in, sendBytes, out, recvBytes);
  size_t sent = 0, received = 0;
  for (int member = 0; member < group_.size(); ++member) {
    sent += sendBytes[member];
    received += recvBytes[member];
  }
  // The blocks keep their packed offsets in the pinned copies.
  return staged(in, sent, out, received, [&](std::byte *hostIn, std::byte *hostOut) {
    return group_.allToAllV(hostIn, sendBytes, hostOut, recvBytes);
  });
}

Status StreamGroup::broadcast(void *data, size_t bytes, int root) {
  if (group_.onDevice())
    return group_.broadcast(data, bytes, root);
  return staged(
      data, bytes, data, bytes,
      [&](std::byte *host, std::byte *) { return group_.broadcast(host, bytes, root); }, true);
}

Status StreamGroup::send(const void *data, size_t bytes, int peer) {
  if (group_.onDevice())
    return group_.send(data, bytes, peer);
  return staged(data, bytes, nullptr, 0,
                [&](std::byte *host, std::byte *) { return group_.send(host, bytes, peer); });
}

Status StreamGroup::recv(void *data, size_t bytes, int peer) {
  if (group_.onDevice())
    return group_.recv(data, bytes, peer);
  return staged(nullptr, 0, data, bytes,
                [&](std::byte *, std::byte *hostOut) { return group_.recv(hostOut, bytes, peer); });
}

Status StreamGroup::allGatherOnHost(const void *in, void *out, size_t bytesPerRank) {
  if (!group_.onDevice())
    return group_.allGather(in, out, bytesPerRank);
  const size_t offset = roundUp(bytesPerRank, 256), gathered = bytesPerRank * group_.size();
  auto device = deviceScratch(stream_, offset + gathered);
  if (!device)
    return device.status();
  // Pageable host memory is fine here: the stream is waited for before
  // `in` and `out` go out of the caller's hands.
  if (Status status = copyAsync(*device, in, bytesPerRank, cudaMemcpyHostToDevice, stream_);
      !status)
    return status;
  if (Status status = group_.allGather(*device, *device + offset, bytesPerRank); !status)
    return status;
  if (Status status = copyAsync(out, *device + offset, gathered, cudaMemcpyDeviceToHost, stream_);
      !status)
    return status;
  SHARDC_CUDA_TRY(cudaStreamSynchronize(stream_));
  return {};
}

} // namespace shardc::rt::cuda
