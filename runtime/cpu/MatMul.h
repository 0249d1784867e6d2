//===- MatMul.h - matmul and linear over OpenBLAS ---------------*- C++ -*-===//
//
// F32 goes to cblas_sgemm and F64 to cblas_dgemm, threaded by OpenBLAS with
// numThreads() threads. F16/BF16 are widened to fp32 scratch, multiplied with
// sgemm and rounded back (this allocates the widened operands: fine for the
// occasional half-precision matmul, not a fast path). Integer matmul is a
// plain triple loop with wrapping arithmetic, for shape computations.
//
// `out` must not overlap the operands.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_MATMUL_H
#define SHARDC_RUNTIME_CPU_MATMUL_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"

#include <string>

namespace shardc::rt::cpu {

/// numpy.matmul: lhs [..., M, K] x rhs [..., K, N] -> out [..., M, N], one
/// element type throughout. A 1-D lhs is a [1, K] row and a 1-D rhs a [K, 1]
/// column, and that dim is absent from out; batch dims broadcast.
/// Batches are multiplied one sgemm after another (each threaded by OpenBLAS),
/// except that when rhs is shared by every batch and lhs is dense across
/// them, all of lhs goes through a single [batch*M, K] x [K, N] sgemm.
Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out);

/// graph.linear: input [..., K] x weight [K, N] (or [N, K] when
/// transposeWeight, as PyTorch stores it) + bias [N] -> out [..., N], as one
/// GEMM over all leading dims. `bias` may be null. Float types only.
Status linear(const TensorView &input, const TensorView &weight,
              const TensorView *bias, bool transposeWeight, const TensorView &out);

/// The OpenBLAS kernel set in use ("SkylakeX", "Haswell", "Prescott", ...).
const char *blasCoreName();

/// Empty when OpenBLAS's kernels suit this CPU, else a one-line warning with
/// the fix, for the executor to log once. OpenBLAS picks its kernels by CPU
/// model when it loads, and a model newer than the installed OpenBLAS knows
/// (Debian 12 ships 0.3.21) falls back to the SSE3 "Prescott" kernels:
/// measured on this project's 2-core AVX-512 Xeon, a 768x768x128 sgemm ran
/// at 20-33 GFLOP/s on one thread, and at 110-150 with
/// OPENBLAS_CORETYPE=SkylakeX. The variable must be set before the process
/// starts (OpenBLAS reads it in its load-time constructor).
std::string blasKernelWarning();

/// The OPENBLAS_CORETYPE that suits this CPU better than the kernels in use
/// ("SkylakeX", "Haswell"), or empty when those already suit it.
std::string betterBlasCore();

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_MATMUL_H
