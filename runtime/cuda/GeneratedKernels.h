//===- GeneratedKernels.h - the artifact's compiled fused kernels -*- C++ -*-===//
//
// shardc --target=cuda writes one specialized CUDA kernel per fused
// elementwise step into the artifact's fatbin (kernels.fatbin, named by the
// manifest's "cuda_kernels") and names it in the step's `cuda_kernel`
// parameter. The runtime session loads that fatbin once, when it plans the
// device (runtime/session/DevicePlan.cpp), before any rank runs, through
// the CUDA runtime's library API (no driver library to link); the "fused"
// kernel then launches the named function instead of interpreting the
// expression. A fatbin without code for the device's architecture is
// refused when it is loaded, with one line.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_GENERATEDKERNELS_H
#define SHARDC_RUNTIME_CUDA_GENERATEDKERNELS_H

#include "runtime/core/Status.h"

#include <string>
#include <vector>

namespace shardc::rt::cuda {

/// Loads the fatbin `bytes` (from `file`, for messages) on the current
/// device, replacing the kernels loaded before.
Status loadGeneratedKernels(const std::vector<char> &bytes, const std::string &file);

/// The loaded function `name` (a cudaKernel_t), or null when none is loaded
/// under that name.
void *findGeneratedKernel(const std::string &name);

} // namespace shardc::rt::cuda

#endif
