//===- GeneratedKernels.h - the artifact's compiled fused kernels -*- C++ -*-===//
//
// shardc --target=cuda writes one specialized CUDA kernel per fused
// elementwise step into the artifact's fatbin (kernels.fatbin, named by the
// manifest's "cuda_kernels") and names it in the step's `cuda_kernel`
// parameter. The runtime session loads that fatbin once, when it plans the
// device (runtime/session/DevicePlan.cpp), before any rank runs, through
// the CUDA runtime's library API (no driver library to link). The plan owns
// the loaded library and every CudaDevice opened from the plan shares it, so
// two sessions of one process each run their own artifact's kernels; the
// "fused" kernel reaches them through its call's device (CudaBackend.cpp)
// and launches the named function instead of interpreting the expression. A
// fatbin without code for the device's architecture is refused when it is
// loaded, with one line.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_GENERATEDKERNELS_H
#define SHARDC_RUNTIME_CUDA_GENERATEDKERNELS_H

#include "runtime/core/Status.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardc::rt::cuda {

class GeneratedKernels {
public:
  /// Loads the fatbin `bytes` (read from `file`, which messages name).
  static StatusOr<std::unique_ptr<GeneratedKernels>> load(std::vector<char> bytes,
                                                          const std::string &file);
  /// Unloads the library: every launch of its functions must be done.
  ~GeneratedKernels();
  GeneratedKernels(const GeneratedKernels &) = delete;
  GeneratedKernels &operator=(const GeneratedKernels &) = delete;

  /// The loaded function `name` (a cudaKernel_t), or null when the fatbin
  /// has none of that name. Safe to call from every rank's thread at once.
  void *find(const std::string &name) const;

private:
  GeneratedKernels(std::vector<char> bytes, void *library)
      : bytes_(std::move(bytes)), library_(library) {}

  std::vector<char> bytes_; ///< kept alive: the library may refer to them
  void *library_;           ///< cudaLibrary_t
  mutable std::mutex mutex_;
  mutable std::map<std::string, void *> kernels_; ///< found so far (null: not in the fatbin)
};

} // namespace shardc::rt::cuda

#endif
