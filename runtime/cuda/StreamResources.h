//===- StreamResources.h - what the kernels on one stream share -*- C++ -*-===//
//
// A kernel sees only its KernelCall, whose `stream` is the native handle. The
// few things a kernel needs beyond it belong to the stream, not the device,
// because streams run concurrently (a compute and a communication stream, or
// several in-process ranks on one GPU): the cuBLASLt workspace, which two
// GEMMs running at once must not share, and the slot where kernels record
// device-side errors for that stream's synchronize(). CudaStream registers
// its resources here under its handle for its lifetime.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_STREAMRESOURCES_H
#define SHARDC_RUNTIME_CUDA_STREAMRESOURCES_H

#include "runtime/core/Status.h"
#include "runtime/cuda/Launch.h"

#include <cstddef>

namespace shardc::rt::cuda {

struct StreamResources {
  /// Device memory for cuBLASLt; null (and 0) gives GEMMs no workspace.
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  /// Host memory mapped into the device's address space; null: not recorded.
  DeviceError *errors = nullptr;
};

void registerStream(void *stream, const StreamResources &resources);
void unregisterStream(void *stream);
/// The resources of a registered stream; empty ones for any other.
StreamResources resourcesOf(void *stream);

/// The error a kernel recorded in `error` as "op: ..." (then clears it), or
/// success. Call only once the stream's work is done.
Status takeDeviceError(DeviceError *error);

} // namespace shardc::rt::cuda

#endif
