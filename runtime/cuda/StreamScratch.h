//===- StreamScratch.h - scratch memory kept per stream ---------*- C++ -*-===//
//
// Device and pinned host memory that the kernels needing temporary buffers
// (the collectives' interleaving and staging, the routed experts' row
// exchanges and intermediates) take from their stream. Kept per stream
// rather than per device: the in-process ranks sharing a GPU run at once,
// each on its own stream. Grown, never shrunk, in whole MiBs, so a program's
// kernels stop allocating after the first run.
//
// One region of each kind per stream: a kernel's later request may move it,
// so a pointer is good until the next request on the same stream. The host
// writes pinned memory only right after a stream synchronize, so no copy
// queued earlier still reads or writes it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_STREAMSCRATCH_H
#define SHARDC_RUNTIME_CUDA_STREAMSCRATCH_H

#include "runtime/core/Status.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace shardc::rt::cuda {

inline size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

/// Several buffers carved from one scratch region: each add() returns its
/// piece's offset (256-byte aligned), total() the bytes to request.
class ScratchPieces {
public:
  size_t add(size_t bytes) {
    const size_t offset = total_;
    total_ += roundUp(bytes, 256);
    return offset;
  }
  size_t total() const { return total_; }

private:
  size_t total_ = 0;
};

/// At least `bytes` of device memory, in `stream`'s order (a smaller region
/// is freed after the work already queued that reads it).
StatusOr<std::byte *> deviceScratch(cudaStream_t stream, size_t bytes);

/// Two pinned host regions of `first` and `second` bytes.
StatusOr<std::pair<std::byte *, std::byte *>> hostScratch(cudaStream_t stream, size_t first,
                                                          size_t second);

/// Frees what `stream` (a cudaStream_t) holds; for the stream's owner, before
/// it destroys the stream.
void releaseStreamScratch(void *stream);

} // namespace shardc::rt::cuda

#endif
