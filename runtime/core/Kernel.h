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
#include <functional>
#include <map>
#include <memory>
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
  /// What the kernel's prepare function made for this step (see
  /// KernelPrepare); null when it has none or made nothing.
  class KernelState *state = nullptr;
};

/// What a kernel prepares once for one step and reuses in every run: the CPU
/// linear's GEMM primitive and its weight packed for it, for instance. The
/// executor owns it for as long as the step exists. It must not keep the
/// addresses of operands other than weights: the executor may point an
/// output's storage at the caller's tensor anew in every run (OutputBinding).
class KernelState {
public:
  virtual ~KernelState() = default;
  /// Whether the state holds its own copy of input `index` and never reads
  /// the stored one in place: when every step that reads a weight says so,
  /// the executor lets the weight's stored bytes leave memory
  /// (PrepareInput::hold).
  virtual bool copiesInput(size_t index) const {
    (void)index;
    return false;
  }
};

/// Keeps a weight's stored bytes in memory while it lives (or a copy of it).
using WeightHold = std::shared_ptr<const void>;
using HoldWeight = std::function<StatusOr<WeightHold>()>;

/// A step's input as its prepare function sees it.
struct PrepareInput {
  /// A weight: its data fixed.
  bool constant = false;
  /// Set for a weight whose stored bytes may be out of memory: the prepare
  /// reads them only while it holds them, and so does a state that copies
  /// them again later (PackedLinear, packing for another thread count).
  /// Holding them reads them back from the weight file where they had left,
  /// checked against what the load read: a file changed since is an error
  /// naming it. Unset, a constant input's data is in place.
  HoldWeight hold;
};

/// Prepares a step's state from its operands and what `inputs` says of
/// each. May return null: the kernel then runs without state.
using KernelPrepare = StatusOr<std::unique_ptr<KernelState>> (*)(
    const KernelCall &call, const std::vector<PrepareInput> &inputs);

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
  /// `prepare`, if given, runs once per step after `check` (KernelPrepare).
  void add(std::string name, KernelFunction function, KernelFunction check = nullptr,
           KernelPrepare prepare = nullptr) {
    kernels_[std::move(name)] = {function, check, prepare};
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
  /// The kernel's per-step prepare function; null when it has none.
  KernelPrepare findPrepare(const std::string &name) const {
    auto found = kernels_.find(name);
    return found == kernels_.end() ? nullptr : found->second.prepare;
  }

private:
  struct Entry {
    KernelFunction function;
    KernelFunction check;
    KernelPrepare prepare;
  };
  std::map<std::string, Entry> kernels_;
};

} // namespace shardc::rt

#endif
