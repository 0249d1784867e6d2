//===- MatMul.h - matmul and linear through cuBLASLt ------------*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/MatMul.h, with its checks and messages.
//
// Float GEMMs (F32, F16, BF16, F64) go to cuBLASLt with fp32 accumulation
// (F64: fp64), never TF32, so F32 results match the CPU's to fp32 rounding.
// Row-major tensors are handed over as the transposed column-major problem:
// out^T [N, M] = rhs^T [N, K] x lhs^T [K, M], which reads the same memory.
//  - matmul: numpy batching. Batches that are dense on both sides are one
//    strided-batched GEMM; an rhs shared by every batch with a dense lhs is
//    one tall GEMM ([batch * M, K] x [K, N]); other broadcasts are a GEMM per
//    batch. Integer matmul (shape arithmetic) is a plain kernel, wrapping.
//  - linear: one GEMM over all leading dims; the bias added by cuBLASLt's
//    bias epilogue, or, where no algorithm offers it for the types, written
//    into the output first and accumulated onto (beta = 1), as on the CPU.
// The algorithm cuBLASLt's heuristic picks is cached per problem (shape,
// types, layout, alignment, device); the workspace is the stream's
// (StreamResources.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_MATMUL_H
#define SHARDC_RUNTIME_CUDA_MATMUL_H

#include "runtime/cuda/HostSupport.h"

namespace shardc::rt::cuda {

Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
              const LaunchContext &context);
Status linear(const TensorView &input, const TensorView &weight, const TensorView *bias,
              bool transposeWeight, const TensorView &out, const LaunchContext &context);

namespace detail {

/// Integer matmul of `batches` [m, k] x [k, n] products; map operands 1 and
/// 2 give each batch's lhs and rhs matrix index (operand 0 unused).
struct IntegerMatMulArgs {
  void *out = nullptr;
  const void *lhs = nullptr, *rhs = nullptr;
  DType dtype = DType::I64;
  int64_t batches = 0, m = 0, n = 0, k = 0;
  IndexMap<3> map;
};

/// out[r, j] = bias[j] (or 0 without a bias) for r < rows, j < n.
struct BiasFillArgs {
  void *out = nullptr;
  const void *bias = nullptr;
  DType dtype = DType::F32;
  int64_t rows = 0, n = 0;
};

// Launches (MatMul.cu).
void launchIntegerMatMul(const IntegerMatMulArgs &args, cudaStream_t stream);
void launchBiasFill(const BiasFillArgs &args, cudaStream_t stream);

} // namespace detail
} // namespace shardc::rt::cuda

#endif
