//===- GeneratedKernels.cpp - load the fatbin, find its functions ---------===//
#include "runtime/cuda/GeneratedKernels.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

namespace shardc::rt::cuda {
namespace {

struct Loaded {
  std::mutex mutex;
  std::vector<char> bytes; ///< kept alive: the library may refer to them
  cudaLibrary_t library = nullptr;
  std::map<std::string, cudaKernel_t> kernels;
};

Loaded &loaded() {
  static Loaded state;
  return state;
}

} // namespace

Status loadGeneratedKernels(const std::vector<char> &bytes, const std::string &file) {
  Loaded &state = loaded();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.library)
    cudaLibraryUnload(state.library);
  state.library = nullptr;
  state.kernels.clear();
  state.bytes = bytes;
  cudaError_t error = cudaLibraryLoadData(&state.library, state.bytes.data(), nullptr, nullptr, 0,
                                          nullptr, nullptr, 0);
  if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorInvalidKernelImage ||
      error == cudaErrorUnsupportedPtxVersion)
    return Status::error(file + ": holds no code this GPU can run (" +
                         cudaGetErrorString(error) + "); recompile with its --cuda-arch");
  if (error != cudaSuccess)
    return Status::error(file + ": cudaLibraryLoadData: " + cudaGetErrorString(error));
  return {};
}

void *findGeneratedKernel(const std::string &name) {
  Loaded &state = loaded();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.library)
    return nullptr;
  auto [found, added] = state.kernels.try_emplace(name, nullptr);
  if (added && cudaLibraryGetKernel(&found->second, state.library, name.c_str()) != cudaSuccess)
    found->second = nullptr;
  return reinterpret_cast<void *>(found->second);
}

} // namespace shardc::rt::cuda
