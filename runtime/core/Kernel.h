//===- Kernel.h - what a backend's kernels look like to the executor -*- C++ -*-===//
//
// The executor knows kernels only by name: a backend (runtime/cpu,
// runtime/cuda) fills a KernelTable, and each program step is bound to its
// entry once, when the program is prepared.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_KERNEL_H
#define SHARDC_RUNTIME_CORE_KERNEL_H

#include "runtime/core/Params.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt {

class Communicator;
class Device;

/// What a kernel counted in one run (a name and a number each), for
/// `--profile`: moe_dispatch's entries per expert, for instance.
using StepCounters = std::vector<std::pair<std::string, int64_t>>;

/// The arguments of one kernel launch.
struct KernelCall {
  const std::vector<TensorView> &inputs;
  const std::vector<TensorView> &outputs;
  const Params &params;
  /// The group a collective step runs on (its `mesh_axes`); null for the
  /// steps that are not collectives.
  Communicator *communicator = nullptr;
  /// The device's native stream handle (a cudaStream_t), set by
  /// Stream::launch for the kernel to enqueue its work on; null on the CPU,
  /// whose kernels run when called.
  void *stream = nullptr;
  /// The device the program was prepared for (set by the executor), for the
  /// kernels that need what the device holds beyond memory: the CUDA
  /// backend's generated kernels (runtime/cuda/GeneratedKernels.h).
  const Device *device = nullptr;
  /// Set by the executor when it profiles: where a kernel that counts
  /// something reports it (empty on entry). Null otherwise; counting then
  /// costs nothing.
  StepCounters *counters = nullptr;
};

/// Fails unless `call` has minInputs..maxInputs inputs and exactly `outputs`
/// outputs: what every backend's table entry checks before it reads them.
Status expectOperands(const KernelCall &call, size_t minInputs, size_t maxInputs, size_t outputs);

using KernelFunction = Status (*)(const KernelCall &call);

class KernelTable {
public:
  /// `check`, if given, validates a call without running it (operand shapes,
  /// element types, parameters): the executor calls it once per step when it
  /// prepares a program, so that a kernel whose errors would otherwise only
  /// surface asynchronously (a GPU's) reports them before the first run.
  void add(std::string name, KernelFunction function, KernelFunction check = nullptr) {
    kernels_[std::move(name)] = {function, check};
  }
  /// Null when the backend has no kernel of that name.
  KernelFunction find(const std::string &name) const {
    auto found = kernels_.find(name);
    return found == kernels_.end() ? nullptr : found->second.function;
  }
  /// The kernel's prepare-time check; null when it has none.
  KernelFunction findCheck(const std::string &name) const {
    auto found = kernels_.find(name);
    return found == kernels_.end() ? nullptr : found->second.check;
  }

private:
  struct Entry {
    KernelFunction function;
    KernelFunction check;
  };
  std::map<std::string, Entry> kernels_;
};

} // namespace shardc::rt

#endif
