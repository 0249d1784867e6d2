//===- MoeCall.h - the routed-experts steps' parameters ---------*- C++ -*-===//
//
// How moe_dispatch, moe_experts and moe_combine read their parameters and
// operands from a KernelCall, for every backend. Apart from the contract
// (Moe.h) because it needs the executor's KernelCall and Params, which the
// contract library does not link.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_MOECALL_H
#define SHARDC_RUNTIME_KERNELS_MOECALL_H

#include "runtime/core/Kernel.h"
#include "runtime/kernels/Moe.h"

namespace shardc::rt::kernels {

/// The shared parameters of `call` (`experts`, `exchange`, `capacity`) and
/// its group: the communicator's size and rank, or P = 1 without one.
MoeGroup moeGroupOf(const KernelCall &call);

/// moe_experts' own parameters and its operands by role.
struct MoeExpertsCall {
  bool gated = false;
  bool transposeWeights = false;
  UnaryOp activation = UnaryOp::Silu;
  const TensorView *rows = nullptr, *routing = nullptr;
  const TensorView *gate = nullptr; ///< null when not gated
  const TensorView *up = nullptr, *down = nullptr, *out = nullptr;
};

/// Reads `gated`, `transpose_weights` and `activation`, and checks that the
/// operands are rows, routing, [w_gate,] w_up, w_down to one result.
Status decodeMoeExperts(const KernelCall &call, MoeExpertsCall &experts);

} // namespace shardc::rt::kernels

#endif
