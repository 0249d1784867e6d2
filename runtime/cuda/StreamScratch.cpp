//===- StreamScratch.cpp - scratch memory kept per stream -----------------===//
#include "runtime/cuda/StreamScratch.h"

#include "runtime/cuda/CudaStatus.h"

#include <map>
#include <mutex>

namespace shardc::rt::cuda {
namespace {

struct Scratch {
  void *device = nullptr;
  size_t deviceBytes = 0;
  void *host = nullptr; // pinned
  size_t hostBytes = 0;
};

std::mutex scratchMutex;
std::map<void *, Scratch> scratches;

} // namespace

StatusOr<std::byte *> deviceScratch(cudaStream_t stream, size_t bytes) {
  std::lock_guard<std::mutex> guard(scratchMutex);
  Scratch &scratch = scratches[stream];
  if (scratch.deviceBytes < bytes) {
    // Stream-ordered: freed after the work already queued that reads it.
    if (scratch.device)
      SHARDC_CUDA_TRY(cudaFreeAsync(scratch.device, stream));
    scratch.device = nullptr;
    scratch.deviceBytes = 0;
    const size_t size = roundUp(bytes, size_t(1) << 20);
    SHARDC_CUDA_TRY(cudaMallocAsync(&scratch.device, size, stream));
    scratch.deviceBytes = size;
  }
  return static_cast<std::byte *>(scratch.device);
}

StatusOr<std::pair<std::byte *, std::byte *>> hostScratch(cudaStream_t stream, size_t first,
                                                          size_t second) {
  const size_t offset = roundUp(first, 256);
  std::lock_guard<std::mutex> guard(scratchMutex);
  Scratch &scratch = scratches[stream];
  if (scratch.hostBytes < offset + second) {
    if (scratch.host) { // copies queued earlier may still read or write it
      SHARDC_CUDA_TRY(cudaStreamSynchronize(stream));
      SHARDC_CUDA_TRY(cudaFreeHost(scratch.host));
    }
    scratch.host = nullptr;
    scratch.hostBytes = 0;
    const size_t size = roundUp(offset + second, size_t(1) << 20);
    SHARDC_CUDA_TRY(cudaMallocHost(&scratch.host, size));
    scratch.hostBytes = size;
  }
  auto *base = static_cast<std::byte *>(scratch.host);
  return std::make_pair(base, base + offset);
}

void releaseStreamScratch(void *stream) {
  std::lock_guard<std::mutex> guard(scratchMutex);
  auto found = scratches.find(stream);
  if (found == scratches.end())
    return;
  if (found->second.device)
    (void)cudaFreeAsync(found->second.device, static_cast<cudaStream_t>(stream));
  if (found->second.host) {
    (void)cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    (void)cudaFreeHost(found->second.host);
  }
  scratches.erase(found);
}

} // namespace shardc::rt::cuda
