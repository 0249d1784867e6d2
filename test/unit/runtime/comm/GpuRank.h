//===- GpuRank.h - the collective checks with the CUDA kernels --*- C++ -*-===//
//
// For the GPU tests of the communicators: a rank thread that holds a GpuRank
// runs every kernel check of CollectiveChecks.h through runtime/cuda's
// collective kernels, on device copies of the operands and in its own stream
// (as shardrun's ranks do), then copies the outputs back for the comparison.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_COMM_GPURANK_H
#define SHARDC_TEST_UNIT_COMM_GPURANK_H

#include "CollectiveChecks.h"

#include "runtime/cuda/Collectives.h"
#include "runtime/cuda/StreamScratch.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace shardc::rt::test {

inline bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

inline const KernelTable &cudaCollectives() {
  static const KernelTable table = [] {
    KernelTable made;
    cuda::addCollectiveKernels(made);
    return made;
  }();
  return table;
}

inline thread_local cudaStream_t rankStream = nullptr;

inline Status cudaCheck(cudaError_t error, const char *what) {
  return error == cudaSuccess ? Status()
                              : Status::error(std::string(what) + ": " + cudaGetErrorString(error));
}

inline Status runOnGpu(const std::string &name, Communicator *comm,
                       const std::vector<TensorView> &inputs,
                       const std::vector<TensorView> &outputs, const Params &params) {
  KernelFunction kernel = cudaCollectives().find(name);
  if (!kernel)
    return Status::error("no CUDA kernel '" + name + "'");
  std::vector<void *> memory;
  auto onDevice = [&](const TensorView &view) {
    void *data = nullptr;
    (void)cudaMalloc(&data, std::max<size_t>(view.bytes(), 1));
    memory.push_back(data);
    return TensorView{data, view.dtype, view.shape};
  };
  std::vector<TensorView> deviceInputs, deviceOutputs;
  Status status;
  for (const TensorView &input : inputs) {
    deviceInputs.push_back(onDevice(input));
    if (status)
      status = cudaCheck(
          cudaMemcpy(deviceInputs.back().data, input.data, input.bytes(), cudaMemcpyHostToDevice),
          "copy in");
  }
  for (const TensorView &output : outputs) {
    deviceOutputs.push_back(onDevice(output));
    // Garbage, so that an output the kernel leaves unwritten shows.
    (void)cudaMemset(deviceOutputs.back().data, 0xab, output.bytes());
  }
  KernelCall call{deviceInputs, deviceOutputs, params, comm, rankStream};
  if (status)
    status = cudaCollectives().findCheck(name)(call);
  if (status)
    status = kernel(call);
  if (status && comm && comm->onDevice())
    status = comm->flush();
  if (Status synced = cudaCheck(cudaStreamSynchronize(rankStream), name.c_str()); status)
    status = synced;
  for (size_t i = 0; status && i < outputs.size(); ++i)
    status = cudaCheck(cudaMemcpy(outputs[i].data, deviceOutputs[i].data, outputs[i].bytes(),
                                  cudaMemcpyDeviceToHost),
                       "copy out");
  for (void *data : memory)
    (void)cudaFree(data);
  return status;
}

/// For its lifetime, this thread's kernel checks run on GPU 0 in a stream
/// of their own.
class GpuRank {
public:
  GpuRank() {
    (void)cudaSetDevice(0);
    (void)cudaStreamCreateWithFlags(&rankStream, cudaStreamNonBlocking);
    kernelRunner = runOnGpu;
  }
  ~GpuRank() {
    kernelRunner = nullptr;
    cuda::releaseStreamScratch(rankStream);
    (void)cudaStreamDestroy(rankStream);
    rankStream = nullptr;
  }
  cudaStream_t stream() const { return rankStream; }
};

const std::vector<DType> kEveryKernelType = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                             DType::I32, DType::I64, DType::I8,   DType::Bool};

} // namespace shardc::rt::test

#endif
