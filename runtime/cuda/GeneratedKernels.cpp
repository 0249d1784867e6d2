//===- GeneratedKernels.cpp - load the fatbin, find its functions ---------===//
#include "runtime/cuda/GeneratedKernels.h"

#include <cuda_runtime_api.h>

namespace shardc::rt::cuda {

StatusOr<std::unique_ptr<GeneratedKernels>> GeneratedKernels::load(std::vector<char> bytes,
                                                                   const std::string &file) {
  cudaLibrary_t library = nullptr;
  cudaError_t error =
      cudaLibraryLoadData(&library, bytes.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorInvalidKernelImage ||
      error == cudaErrorUnsupportedPtxVersion)
    return Status::error(file + ": holds no code this GPU can run (" +
                         cudaGetErrorString(error) + "); recompile with its --cuda-arch");
  if (error != cudaSuccess)
    return Status::error(file + ": cudaLibraryLoadData: " + cudaGetErrorString(error));
  return std::unique_ptr<GeneratedKernels>(new GeneratedKernels(std::move(bytes), library));
}

GeneratedKernels::~GeneratedKernels() {
  (void)cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

void *GeneratedKernels::find(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [found, added] = kernels_.try_emplace(name, nullptr);
  cudaKernel_t kernel = nullptr;
  if (added && cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(library_), name.c_str()) ==
                   cudaSuccess)
    found->second = reinterpret_cast<void *>(kernel);
  return found->second;
}

} // namespace shardc::rt::cuda
