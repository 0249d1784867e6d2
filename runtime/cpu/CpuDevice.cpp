//===- CpuDevice.cpp - the host CPU as a runtime Device -------------------===//
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/CpuBackend.h"

#include <cstdlib>
#include <cstring>

namespace shardc::rt::cpu {
namespace {

/// Cache line and AVX-512 vector size.
constexpr size_t kAlignment = 64;

class DoneEvent final : public Event {
public:
  Status wait() override { return {}; }
};

class InlineStream final : public Stream {
public:
  Status launch(KernelFunction kernel, const KernelCall &call) override { return kernel(call); }
  StatusOr<std::unique_ptr<Event>> record() override {
    return std::unique_ptr<Event>(std::make_unique<DoneEvent>());
  }
  Status waitFor(Event &) override { return {}; }
  Status synchronize() override { return {}; }
};

} // namespace

StatusOr<void *> CpuDevice::allocate(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void *memory = std::aligned_alloc(kAlignment, rounded);
  if (!memory)
    return Status::error("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  return memory;
}

void CpuDevice::release(void *memory) { std::free(memory); }

// Empty tensors may have no memory at all (a null data pointer), which
// memcpy must not be given even for zero bytes.
Status CpuDevice::copyToDevice(void *device, const void *host, size_t bytes) {
  if (bytes)
    std::memcpy(device, host, bytes);
  return {};
}

Status CpuDevice::copyToHost(void *host, const void *device, size_t bytes) {
  if (bytes)
    std::memcpy(host, device, bytes);
  return {};
}

StatusOr<std::unique_ptr<Stream>> CpuDevice::createStream() {
  return std::unique_ptr<Stream>(std::make_unique<InlineStream>());
}

const KernelTable &CpuDevice::kernels() const { return kernelTable(); }

} // namespace shardc::rt::cpu
