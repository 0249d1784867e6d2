//===- Kernel.h - what a backend's kernels look like to the executor -*- C++ -*-===//
//
// The executor knows kernels only by name: a backend (runtime/cpu, later
// runtime/cuda) fills a KernelTable, and each program step is bound to its
// entry once, when the program is prepared.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_KERNEL_H
#define SHARDC_RUNTIME_CORE_KERNEL_H

#include "runtime/core/Params.h"
#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace shardc::rt {

class Communicator;

/// The arguments of one kernel launch.
struct KernelCall {
  const std::vector<TensorView> &inputs;
  const std::vector<TensorView> &outputs;
  const Params &params;
  /// The group a collective step runs on (its `mesh_axes`); null for the
  /// steps that are not collectives.
  Communicator *communicator = nullptr;
};

using KernelFunction = Status (*)(const KernelCall &call);

class KernelTable {
public:
  void add(std::string name, KernelFunction function) { kernels_[std::move(name)] = function; }
  /// Null when the backend has no kernel of that name.
  KernelFunction find(const std::string &name) const {
    auto found = kernels_.find(name);
    return found == kernels_.end() ? nullptr : found->second;
  }

private:
  std::map<std::string, KernelFunction> kernels_;
};

} // namespace shardc::rt

#endif
