//===- MatMul.h - matmul and linear over oneDNN's sgemm ---------*- C++ -*-===//
//
// F32 goes to oneDNN's sgemm (dnnl_sgemm), threaded with the calling thread's
// OpenMP setting, which numThreads() keeps at the kernels' count. F16/BF16
// are widened to fp32 scratch, multiplied with sgemm and rounded back (this
// allocates the widened operands: fine for the occasional half-precision
// matmul, not a fast path). F64 (shape and statistics computations) and
// integer matmul are plain loops; integers wrap.
//
// Why oneDNN and not OpenBLAS (measured on this project's 2-core AVX-512
// Zen 5, M = 128 with GPT-2-small's K and N, GFLOP/s on one / two threads):
// oneDNN 2.6 182-214 / 255-400, Debian's OpenBLAS 0.3.21 85-92 / - with the
// kernels it picks for this CPU (Haswell's; it does not know Zen 5) and
// 143-159 / 263-276 with OPENBLAS_CORETYPE=SkylakeX, Debian's BLIS 0.9 27-30
// / 47-54. oneDNN chooses its kernels by instruction set, not CPU model.
//
// A linear step whose fp32 weight is constant does not come here once the
// executor has prepared it: PackedLinear.h runs it on a oneDNN matmul
// primitive with the weight packed once.
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
/// `transposeLhs` / `transposeRhs` read that operand's matrices with the
/// last two dims swapped (lhs stored [..., K, M], rhs [..., N, K]), as
/// sgemm's 'T' does, without a transposed copy: a weight gradient x^T dy and
/// attention's backward products (passes/Lowering/FoldMatMulTransposes).
/// Batches are multiplied one sgemm after another (each threaded), or with
/// enough of them shared out among the threads (one single-threaded sgemm
/// per batch); when rhs is shared by every batch and an untransposed lhs is
/// dense across them, all of lhs goes through a single [batch*M, K] x [K, N]
/// sgemm.
Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
              bool transposeLhs = false, bool transposeRhs = false);

/// graph.linear: input [..., K] x weight [K, N] (or [N, K] when
/// transposeWeight, as PyTorch stores it) + bias [N] -> out [..., N], as one
/// GEMM over all leading dims. `bias` may be null. Float types only.
Status linear(const TensorView &input, const TensorView &weight,
              const TensorView *bias, bool transposeWeight, const TensorView &out);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_MATMUL_H
