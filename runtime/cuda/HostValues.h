//===- HostValues.h - small int64 arrays between host and GPU ---*- C++ -*-===//
//
// For the kernels that decide on the host what their device work does (the
// routed experts read indices and routing counts, and hand the device the
// row lists they derive): downloads into ordinary vectors, valid once the
// stream is synchronized, and uploads through the stream's pinned scratch,
// so the host's vectors may go as soon as the upload is enqueued.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_HOSTVALUES_H
#define SHARDC_RUNTIME_CUDA_HOSTVALUES_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace shardc::rt::cuda {

/// Enqueues the copy of the int64 device tensor `from` into `to` (resized to
/// its elements); `to` holds them once the stream is synchronized.
Status copyValuesToHost(const TensorView &from, std::vector<int64_t> &to, cudaStream_t stream);

/// One host array bound for device memory at `to`.
struct ValuesUpload {
  const std::vector<int64_t> *values;
  void *to;
};

/// Enqueues the uploads, staged through the stream's pinned scratch. Call
/// only right after a synchronize of the stream (StreamScratch.h): the host
/// writes the pinned memory.
Status uploadValues(std::initializer_list<ValuesUpload> uploads, cudaStream_t stream);

} // namespace shardc::rt::cuda

#endif
