//===- HostValues.cpp - small int64 arrays between host and GPU -----------===//
#include "runtime/cuda/HostValues.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/StreamScratch.h"

#include <cstring>

namespace shardc::rt::cuda {

Status copyValuesToHost(const TensorView &from, std::vector<int64_t> &to, cudaStream_t stream) {
  to.resize(size_t(from.numel()));
  if (!to.empty())
    SHARDC_CUDA_TRY(
        cudaMemcpyAsync(to.data(), from.data, from.bytes(), cudaMemcpyDeviceToHost, stream));
  return {};
}

Status uploadValues(std::initializer_list<ValuesUpload> uploads, cudaStream_t stream) {
  ScratchPieces pieces;
  std::vector<size_t> offsets;
  for (const ValuesUpload &upload : uploads)
    offsets.push_back(pieces.add(upload.values->size() * sizeof(int64_t)));
  auto pinned = hostScratch(stream, pieces.total(), 0);
  if (!pinned)
    return pinned.status();
  size_t i = 0;
  for (const ValuesUpload &upload : uploads) {
    const size_t bytes = upload.values->size() * sizeof(int64_t);
    std::byte *staged = pinned->first + offsets[i++];
    if (!bytes)
      continue;
    std::memcpy(staged, upload.values->data(), bytes);
    SHARDC_CUDA_TRY(cudaMemcpyAsync(upload.to, staged, bytes, cudaMemcpyHostToDevice, stream));
  }
  return {};
}

} // namespace shardc::rt::cuda
