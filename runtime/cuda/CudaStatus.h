//===- CudaStatus.h - CUDA errors as runtime Status values ------*- C++ -*-===//
//
// Every CUDA runtime call of the backend goes through cudaStatus(), so that a
// failure reads "cudaMalloc: out of memory" (the API, then CUDA's own words)
// and never escapes as an unchecked error code.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_CUDASTATUS_H
#define SHARDC_RUNTIME_CUDA_CUDASTATUS_H

#include "runtime/core/Status.h"

#include <cuda_runtime_api.h>

namespace shardc::rt::cuda {

/// Success for cudaSuccess, else "api: <cudaGetErrorString>".
Status cudaStatus(cudaError_t error, const char *api);

/// The error of the kernel launch just made on this thread, as "op: kernel
/// launch failed: <reason>" (bad configurations; faults while the kernel runs
/// surface at the next synchronization).
Status launchStatus(const char *op);

} // namespace shardc::rt::cuda

/// Returns the Status of a failed CUDA call from the enclosing function.
#define SHARDC_CUDA_TRY(call)                                                                      \
  do {                                                                                             \
    ::shardc::rt::Status status_ = ::shardc::rt::cuda::cudaStatus((call), #call);                  \
    if (!status_.ok())                                                                             \
      return status_;                                                                              \
  } while (false)

#endif
