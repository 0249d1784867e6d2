//===- MoeCall.cpp - the routed-experts steps' parameters -----------------===//
#include "runtime/kernels/MoeCall.h"

#include "runtime/core/Communicator.h"

namespace shardc::rt::kernels {

MoeGroup moeGroupOf(const KernelCall &call) {
  MoeGroup group;
  group.experts = call.params.integer("experts", 0);
  group.exchange = call.params.flag("exchange", false);
  group.capacity = call.params.integer("capacity", 0);
  if (call.communicator) {
    group.members = call.communicator->size();
    group.member = call.communicator->rank();
  }
  return group;
}

Status decodeMoeExperts(const KernelCall &call, MoeExpertsCall &experts) {
  const char *op = "moe_experts";
  experts.gated = call.params.flag("gated", false);
  const size_t weights = experts.gated ? 3 : 2;
  if (call.inputs.size() != 2 + weights || call.outputs.size() != 1)
    return fail(op, std::string(experts.gated ? "gated" : "ungated") + " takes rows, routing and " +
                        std::to_string(weights) + " weights to one result; got " +
                        std::to_string(call.inputs.size()) + " inputs and " +
                        std::to_string(call.outputs.size()) + " outputs");
  const std::vector<std::string> &activation = call.params.strings("activation");
  SHARDC_KERNEL_TRY(moeActivation(activation.size() == 1 ? activation[0] : "", experts.activation));
  experts.transposeWeights = call.params.flag("transpose_weights", false);
  experts.rows = &call.inputs[0];
  experts.routing = &call.inputs[1];
  experts.gate = experts.gated ? &call.inputs[2] : nullptr;
  experts.up = &call.inputs[experts.gated ? 3 : 2];
  experts.down = &call.inputs[experts.gated ? 4 : 3];
  experts.out = &call.outputs[0];
  return Status::success();
}

} // namespace shardc::rt::kernels
