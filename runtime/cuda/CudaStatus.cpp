//===- CudaStatus.cpp - CUDA errors as runtime Status values --------------===//
#include "runtime/cuda/CudaStatus.h"

#include <string>

namespace shardc::rt::cuda {

Status cudaStatus(cudaError_t error, const char *api) {
  if (error == cudaSuccess)
    return {};
  // The call as written ("cudaMalloc(&memory, bytes)") names its API by the
  // text before the parenthesis.
  std::string name(api);
  name = name.substr(0, name.find('('));
  return Status::error(name + ": " + cudaGetErrorString(error));
}

Status launchStatus(const char *op) {
  // cudaGetLastError also clears a launch error, which is not sticky, so the
  // next launch starts clean.
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess)
    return {};
  return Status::error(std::string(op) + ": kernel launch failed: " + cudaGetErrorString(error));
}

} // namespace shardc::rt::cuda
