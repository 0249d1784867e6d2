//===- Kernel.cpp - what a backend's kernels look like to the executor ----===//
#include "runtime/core/Kernel.h"

namespace shardc::rt {

Status expectOperands(const KernelCall &call, size_t minInputs, size_t maxInputs, size_t outputs) {
  if (call.inputs.size() < minInputs || call.inputs.size() > maxInputs ||
      call.outputs.size() != outputs)
    return Status::error("expected " + std::to_string(minInputs) +
                         (maxInputs != minInputs ? "-" + std::to_string(maxInputs) : "") +
                         " inputs and " + std::to_string(outputs) + " outputs; got " +
                         std::to_string(call.inputs.size()) + " and " +
                         std::to_string(call.outputs.size()));
  return {};
}

} // namespace shardc::rt
