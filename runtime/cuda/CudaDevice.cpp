//===- CudaDevice.cpp - an NVIDIA GPU as a runtime Device -----------------===//
#include "runtime/cuda/CudaDevice.h"

#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/StreamResources.h"
#include "runtime/cuda/StreamScratch.h"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace shardc::rt::cuda {
namespace {

/// cuBLASLt's recommended workspace on Hopper (smaller GPUs need less; a
/// larger one only widens the heuristic's choice).
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

/// cudaMalloc's own alignment; sizes are rounded to it too.
constexpr size_t kAlignment = 256;

cudaStream_t native(void *stream) { return static_cast<cudaStream_t>(stream); }

class CudaEvent final : public Event {
public:
  explicit CudaEvent(cudaEvent_t event) : event_(event) {}
  ~CudaEvent() override { (void)cudaEventDestroy(event_); }
  Status wait() override {
    return cudaStatus(cudaEventSynchronize(event_), "cudaEventSynchronize");
  }
  cudaEvent_t native() const { return event_; }

private:
  cudaEvent_t event_;
};

class CudaStream final : public Stream {
public:
  /// `errors` is mapped host memory, which the kernels write at `errorsOnDevice`.
  CudaStream(int ordinal, cudaStream_t stream, void *workspace, DeviceError *errors,
             DeviceError *errorsOnDevice)
      : ordinal_(ordinal), stream_(stream), workspace_(workspace), errors_(errors) {
    registerStream(stream_, {workspace_, workspace_ ? kWorkspaceBytes : 0, errorsOnDevice});
  }
  ~CudaStream() override {
    (void)cudaSetDevice(ordinal_);
    (void)cudaStreamSynchronize(stream_);
    unregisterStream(stream_);
    releaseStreamScratch(stream_);
    (void)cudaFree(workspace_);
    (void)cudaFreeHost(errors_);
    (void)cudaStreamDestroy(stream_);
  }

  void *nativeHandle() const override { return stream_; }

  Status launch(KernelFunction kernel, const KernelCall &call) override {
    SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
    KernelCall onStream = call;
    onStream.stream = stream_;
    return kernel(onStream);
  }

  StatusOr<std::unique_ptr<Event>> record() override {
    SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
    cudaEvent_t event;
    SHARDC_CUDA_TRY(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    auto owned = std::make_unique<CudaEvent>(event);
    SHARDC_CUDA_TRY(cudaEventRecord(event, stream_));
    return std::unique_ptr<Event>(std::move(owned));
  }

  Status waitFor(Event &event) override {
    auto *cudaEvent = dynamic_cast<CudaEvent *>(&event);
    if (!cudaEvent)
      return Status::error("a CUDA stream can only wait for an event of a CUDA stream");
    SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
    SHARDC_CUDA_TRY(cudaStreamWaitEvent(stream_, cudaEvent->native(), 0));
    return {};
  }

  Status synchronize() override {
    SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
    SHARDC_CUDA_TRY(cudaStreamSynchronize(stream_));
    return takeDeviceError(errors_);
  }

private:
  int ordinal_;
  cudaStream_t stream_;
  void *workspace_;
  DeviceError *errors_;
};

} // namespace

int CudaDevice::count() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess) {
    (void)cudaGetLastError(); // no driver, or no GPU: not an error here
    return 0;
  }
  return devices;
}

StatusOr<std::unique_ptr<CudaDevice>>
CudaDevice::open(int ordinal, std::shared_ptr<const GeneratedKernels> generated) {
  int devices = 0;
  cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::error(std::string("no CUDA device is visible (") + cudaGetErrorString(error) +
                         ")");
  }
  if (devices == 0)
    return Status::error("no CUDA device is visible");
  if (ordinal < 0 || ordinal >= devices)
    return Status::error("device " + std::to_string(ordinal) + " does not exist (" +
                         std::to_string(devices) + " visible)");
  SHARDC_CUDA_TRY(cudaSetDevice(ordinal));
  cudaDeviceProp properties;
  SHARDC_CUDA_TRY(cudaGetDeviceProperties(&properties, ordinal));
  cudaStream_t copyStream;
  SHARDC_CUDA_TRY(cudaStreamCreateWithFlags(&copyStream, cudaStreamNonBlocking));
  return std::unique_ptr<CudaDevice>(new CudaDevice(
      ordinal, "sm_" + std::to_string(properties.major) + std::to_string(properties.minor),
      properties.name, copyStream, std::move(generated)));
}

CudaDevice::~CudaDevice() {
  (void)cudaSetDevice(ordinal_);
  (void)cudaStreamDestroy(native(copyStream_));
}

StatusOr<void *> CudaDevice::allocate(size_t bytes) {
  SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
  // Never a null pointer, even for nothing, like the CPU device.
  const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void *memory = nullptr;
  if (cudaError_t error = cudaMalloc(&memory, rounded); error != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::error("cudaMalloc: " + std::string(cudaGetErrorString(error)) + " (" +
                         std::to_string(bytes) + " bytes on " + productName_ + " " +
                         std::to_string(ordinal_) + ")");
  }
  return memory;
}

void CudaDevice::release(void *memory) {
  (void)cudaSetDevice(ordinal_);
  (void)cudaFree(memory);
}

Status CudaDevice::copy(void *to, const void *from, size_t bytes, bool toDevice) {
  if (!bytes)
    return {};
  SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
  SHARDC_CUDA_TRY(cudaMemcpyAsync(to, from, bytes,
                                  toDevice ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                  native(copyStream_)));
  SHARDC_CUDA_TRY(cudaStreamSynchronize(native(copyStream_)));
  return {};
}

Status CudaDevice::copyToDevice(void *device, const void *host, size_t bytes) {
  return copy(device, host, bytes, /*toDevice=*/true);
}

Status CudaDevice::copyToHost(void *host, const void *device, size_t bytes) {
  return copy(host, device, bytes, /*toDevice=*/false);
}

StatusOr<std::unique_ptr<Stream>> CudaDevice::createStream() {
  SHARDC_CUDA_TRY(cudaSetDevice(ordinal_));
  cudaStream_t stream;
  SHARDC_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *workspace = nullptr, *errors = nullptr, *errorsOnDevice = nullptr;
  Status status = cudaStatus(cudaMalloc(&workspace, kWorkspaceBytes), "cudaMalloc");
  if (status)
    status = cudaStatus(
        cudaHostAlloc(&errors, sizeof(DeviceError), cudaHostAllocMapped | cudaHostAllocPortable),
        "cudaHostAlloc");
  if (status)
    status = cudaStatus(cudaHostGetDevicePointer(&errorsOnDevice, errors, 0),
                        "cudaHostGetDevicePointer");
  if (!status) {
    (void)cudaGetLastError();
    (void)cudaFreeHost(errors);
    (void)cudaFree(workspace);
    (void)cudaStreamDestroy(stream);
    return status;
  }
  *static_cast<DeviceError *>(errors) = DeviceError{};
  return std::unique_ptr<Stream>(
      std::make_unique<CudaStream>(ordinal_, stream, workspace, static_cast<DeviceError *>(errors),
                                   static_cast<DeviceError *>(errorsOnDevice)));
}

const KernelTable &CudaDevice::kernels() const { return kernelTable(); }

} // namespace shardc::rt::cuda
