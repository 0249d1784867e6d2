//===- Device.h - what the executor needs of a device -----------*- C++ -*-===//
//
// After IREE's HAL: a Device owns memory and makes Streams; a Stream runs
// kernel launches in order, asynchronously on devices that can (a GPU), with
// Events to order work across streams (compute against communication). The
// executor is written against these interfaces only, so the CPU backend
// (runtime/cpu) and a CUDA one plug in without changing it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_DEVICE_H
#define SHARDC_RUNTIME_CORE_DEVICE_H

#include "runtime/core/Kernel.h"
#include "runtime/core/Status.h"

#include <memory>
#include <string>

namespace shardc::rt {

/// A point in a stream's work; done once everything launched before it is.
class Event {
public:
  virtual ~Event() = default;
  /// Blocks the host until the event is done.
  virtual Status wait() = 0;
};

class Stream {
public:
  virtual ~Stream() = default;
  /// Enqueues `kernel` on the call's views (device memory); errors may be
  /// reported here or by a later synchronize().
  virtual Status launch(KernelFunction kernel, const KernelCall &call) = 0;
  /// An event done when the work launched so far is.
  virtual StatusOr<std::unique_ptr<Event>> record() = 0;
  /// Work launched after this waits for `event` (recorded on another stream).
  virtual Status waitFor(Event &event) = 0;
  /// Blocks the host until all launched work is done.
  virtual Status synchronize() = 0;
  /// The backend's own handle (a cudaStream_t), for a device communicator's
  /// setStream(); null where work runs inline.
  virtual void *nativeHandle() const { return nullptr; }
};

class Device {
public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  /// Whether kernels can read host memory as it is (a CPU). When not (a
  /// GPU), the executor copies the weights, which the artifact's load read
  /// into host memory, to device memory when it prepares a program.
  virtual bool readsHostMemory() const { return true; }
  /// `bytes` of device memory, aligned for any kernel's vector loads.
  virtual StatusOr<void *> allocate(size_t bytes) = 0;
  virtual void release(void *memory) = 0;
  /// Copies between host and device memory (plain copies on a CPU).
  virtual Status copyToDevice(void *device, const void *host, size_t bytes) = 0;
  virtual Status copyToHost(void *host, const void *device, size_t bytes) = 0;
  virtual StatusOr<std::unique_ptr<Stream>> createStream() = 0;
  /// The device's kernels by the names exec programs use.
  virtual const KernelTable &kernels() const = 0;
};

} // namespace shardc::rt

#endif
