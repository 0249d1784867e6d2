//===- CpuDevice.h - the host CPU as a runtime Device -----------*- C++ -*-===//
#ifndef SHARDC_RUNTIME_CPU_CPUDEVICE_H
#define SHARDC_RUNTIME_CPU_CPUDEVICE_H

#include "runtime/core/Device.h"

namespace shardc::rt::cpu {

/// Host memory, and streams that run each launch when it is made (kernels
/// parallelize inside themselves), so events are always done.
class CpuDevice final : public Device {
public:
  std::string name() const override { return "cpu"; }
  StatusOr<void *> allocate(size_t bytes) override;
  void release(void *memory) override;
  Status copyToDevice(void *device, const void *host, size_t bytes) override;
  Status copyToHost(void *host, const void *device, size_t bytes) override;
  StatusOr<std::unique_ptr<Stream>> createStream() override;
  const KernelTable &kernels() const override;
};

} // namespace shardc::rt::cpu

#endif
