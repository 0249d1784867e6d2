//===- Moe.h - routed-experts steps on the CPU ------------------*- C++ -*-===//
//
// The three kernel steps of one mixture-of-experts layer (docs/experts.md is
// the contract, runtime/kernels/Moe.h its checks and row layout). Like the
// collectives they run on the group of their `mesh_axes` (P members, this
// rank member p; P = 1 without mesh_axes). Parameters of all three:
// `experts` (E), `exchange` (0/1), `capacity` (0 = dropless).
//
//   moe_dispatch  (x [T, H], indices int64 [T, k])
//                 -> (rows [R, H], routing int64 [Q, E])
//   moe_experts   (rows, routing, [w_gate,] w_up, w_down) -> out [R, H]
//                 `activation` (silu, gelu, gelu_tanh, relu), `gated`,
//                 `transpose_weights`
//   moe_combine   (out [R, H], routing, indices [T, k], gates [T, k])
//                 -> y [T, H]
//
// Float storage of any kind: F16/BF16 go through the matmul and unary
// kernels' widening (fp32 compute), the combine sums in fp32 (F64 in double).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_MOE_H
#define SHARDC_RUNTIME_CPU_MOE_H

#include "runtime/core/Kernel.h"

namespace shardc::rt::cpu {

/// Adds the kernels above to `table` under their names.
void addMoeKernels(KernelTable &table);

namespace moe {
Status dispatch(const KernelCall &call);
Status experts(const KernelCall &call);
Status combine(const KernelCall &call);
} // namespace moe

} // namespace shardc::rt::cpu

#endif
