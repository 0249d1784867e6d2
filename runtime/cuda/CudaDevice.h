//===- CudaDevice.h - an NVIDIA GPU as a runtime Device ---------*- C++ -*-===//
//
// The runtime's Device/Stream/Event (runtime/core/Device.h) over the CUDA
// runtime API:
//  - memory from cudaMalloc (256-byte aligned: any vector load fits);
//  - copies through a private stream of the device and waited for, so that
//    when copyToDevice returns the bytes are there for every stream (a plain
//    cudaMemcpy from pageable memory may return before its DMA is done, and
//    the non-blocking streams below do not wait for the legacy stream);
//  - streams created non-blocking; launch() hands the kernel the native
//    cudaStream_t in KernelCall::stream; each stream owns a cuBLASLt
//    workspace and a device-error slot (StreamResources.h);
//  - events without timing, for ordering streams.
// The caller synchronizes a stream before copying its results out (the
// executor does). Every CUDA error becomes a one-line Status naming the API.
//
// Linking this library needs no GPU and no driver: count() is 0 where there
// is none, and open() says so.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_CUDADEVICE_H
#define SHARDC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/core/Device.h"
#include "runtime/cuda/GeneratedKernels.h"

#include <memory>
#include <string>

namespace shardc::rt::cuda {

class CudaDevice final : public Device {
public:
  /// The number of visible GPUs; 0 without a driver or a GPU (never fails).
  static int count();
  /// Opens GPU `ordinal` (as CUDA numbers the visible ones); its fused steps
  /// run `generated`'s kernels, which the device keeps loaded while it lives.
  static StatusOr<std::unique_ptr<CudaDevice>>
  open(int ordinal, std::shared_ptr<const GeneratedKernels> generated = nullptr);
  ~CudaDevice() override;

  std::string name() const override { return "cuda"; }
  bool readsHostMemory() const override { return false; }
  int ordinal() const { return ordinal_; }
  /// "sm_90": the compute capability the kernels run as.
  std::string arch() const { return arch_; }
  /// The product name ("NVIDIA H200"), for logs.
  std::string productName() const { return productName_; }
  /// The artifact's compiled fused kernels; null when it has none.
  const GeneratedKernels *generatedKernels() const { return generated_.get(); }

  StatusOr<void *> allocate(size_t bytes) override;
  void release(void *memory) override;
  Status copyToDevice(void *device, const void *host, size_t bytes) override;
  Status copyToHost(void *host, const void *device, size_t bytes) override;
  StatusOr<std::unique_ptr<Stream>> createStream() override;
  const KernelTable &kernels() const override;

private:
  CudaDevice(int ordinal, std::string arch, std::string productName, void *copyStream,
             std::shared_ptr<const GeneratedKernels> generated)
      : ordinal_(ordinal), arch_(std::move(arch)), productName_(std::move(productName)),
        copyStream_(copyStream), generated_(std::move(generated)) {}
  Status copy(void *to, const void *from, size_t bytes, bool toDevice);

  int ordinal_;
  std::string arch_, productName_;
  void *copyStream_; // cudaStream_t
  std::shared_ptr<const GeneratedKernels> generated_;
};

} // namespace shardc::rt::cuda

#endif
