//===- Moe.h - routed-experts steps on a GPU --------------------*- C++ -*-===//
//
// moe_dispatch, moe_experts and moe_combine (docs/experts.md), with the
// CPU kernels' operands, parameters and messages (runtime/cpu/Moe.h). The
// contract's checks, keep rule and row layout (runtime/kernels/Moe.h) run on
// the host over the few int64 values they need (indices [T, k], the routing
// matrix [Q, E]), copied from the device; the rows never leave it, except
// through a host communicator's staging (StreamGroup.h).
//
//   dispatch  indices to the host (a synchronize), the counts all-gathered,
//             the keep rule and layout; each kept entry's source row uploaded
//             and one gather puts x's rows in send order (straight into
//             `rows` when nothing moves), one all-to-all-v, one gather from
//             the received blocks into `rows`, zeros past the used rows.
//   experts   the routing matrix to the host (a synchronize); per local
//             expert the linear, unary and mul kernels on its segment.
//   combine   routing and indices to the host (a synchronize); the reverse
//             gather and all-to-all-v, then y[t] = the gate-weighted sum of
//             its entries' rows in slot order, in fp32.
//
// F32, F16 and BF16 (float64 is CPU-only, as for the CUDA math kernels).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_MOE_H
#define SHARDC_RUNTIME_CUDA_MOE_H

#include "runtime/core/Kernel.h"
#include "runtime/cuda/HostSupport.h"

namespace shardc::rt::cuda {

Status moeDispatch(const KernelCall &call, const LaunchContext &context);
Status moeExperts(const KernelCall &call, const LaunchContext &context);
Status moeCombine(const KernelCall &call, const LaunchContext &context);

namespace detail {

/// out row r = in row source[r], or zeros where source[r] < 0, for r < rows;
/// rows of `rowBytes` bytes, moved as raw bytes.
struct RowGatherArgs {
  void *out = nullptr;
  const void *in = nullptr;
  const int64_t *source = nullptr; // device memory
  int64_t rows = 0;
  int64_t rowBytes = 0;
};

/// y[t] (hidden wide) = the sum over slots j, in order, of gates[t, j] *
/// own[positions[t, j]], skipping the positions < 0; accumulated in fp32.
struct WeightedSumArgs {
  void *y = nullptr;
  const void *own = nullptr, *gates = nullptr;
  const int64_t *positions = nullptr; // device memory, [tokens, slots]
  DType dtype = DType::F32;
  int64_t tokens = 0, slots = 0, hidden = 0;
};

// Launches (Moe.cu).
void launchRowGather(const RowGatherArgs &args, cudaStream_t stream);
void launchWeightedSum(const WeightedSumArgs &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
