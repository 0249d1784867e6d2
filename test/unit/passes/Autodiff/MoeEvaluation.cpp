//===- MoeEvaluation.cpp - graph.moe in float64 by the CPU kernels --------===//
//
// The runtime lowers graph.moe to three kernels (docs/experts.md); run on one
// member (no group, tokens not exchanged) they compute the whole layer, the
// capacity's keep rule included.
//
//===----------------------------------------------------------------------===//
#include "test/unit/passes/Autodiff/KernelEvaluation.h"

#include "dialects/Graph/GraphOps.h"
#include "runtime/cpu/CpuBackend.h"

#include <algorithm>

using namespace mlir;

namespace shardc::autodiff::check {

std::string evaluateMoe(Operation *op, const std::vector<HostTensor> &operands,
                        std::vector<HostTensor> &results) {
  auto moe = cast<graph::MoeOp>(op);
  results = allocateResults(op);
  const HostTensor &x = operands[0];
  const int64_t tokens = x.shape[0], hidden = x.shape[1];
  const int64_t slots = operands[1].shape[1], experts = moe.getExperts();
  const int64_t capacity = int64_t(moe.getCapacity());
  // Entries routed to this member's experts: every (token, slot), at most
  // `capacity` per expert when there is one.
  int64_t rowCount = tokens * std::min(slots, experts);
  if (capacity > 0)
    rowCount = std::min(rowCount, experts * capacity);

  auto integer = [](int64_t value) { return rt::Param{{value}, {}, {}}; };
  rt::Params params;
  params.set("experts", integer(experts));
  params.set("exchange", integer(0));
  params.set("capacity", integer(capacity));
  params.set("gated", integer(moe.isGated()));
  params.set("transpose_weights", integer(moe.getTransposeWeights()));
  params.set("activation", rt::Param{{}, {}, {moe.getActivation().str()}});

  HostTensor rows = HostTensor::splatFloat(constfold::ScalarType::F64, {rowCount, hidden}, 0);
  HostTensor routing = HostTensor::splatInt(constfold::ScalarType::I64, {1, experts}, 0);
  HostTensor expertOut = rows;
  auto run = [&](const char *name, std::vector<rt::TensorView> inputs,
                 std::vector<rt::TensorView> outputs) -> std::string {
    rt::Status status = rt::cpu::kernelTable().find(name)(rt::KernelCall{inputs, outputs, params});
    return status ? "" : std::string(name) + ": " + status.message();
  };
  if (std::string error = run("moe_dispatch", {viewOf(x), viewOf(operands[1])},
                              {viewOf(rows), viewOf(routing)});
      !error.empty())
    return error;
  std::vector<rt::TensorView> expertInputs{viewOf(rows), viewOf(routing)};
  for (size_t weight = 3; weight < operands.size(); ++weight)
    expertInputs.push_back(viewOf(operands[weight]));
  if (std::string error = run("moe_experts", expertInputs, {viewOf(expertOut)}); !error.empty())
    return error;
  return run("moe_combine",
             {viewOf(expertOut), viewOf(routing), viewOf(operands[1]), viewOf(operands[2])},
             {viewOf(results[0])});
}

} // namespace shardc::autodiff::check
