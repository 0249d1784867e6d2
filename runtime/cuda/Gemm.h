//===- Gemm.h - one cuBLASLt GEMM, its algorithm cached ---------*- C++ -*-===//
//
// The only place that talks to cuBLASLt. A Gemm is stated in cuBLASLt's own
// column-major terms (MatMul.cpp maps row-major tensors onto it). The first
// time a problem is seen its algorithm comes from cuBLASLt's heuristic, for
// the pointers' actual alignment and the stream's workspace; later calls
// with the same problem reuse it. One cuBLASLt handle per device.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_GEMM_H
#define SHARDC_RUNTIME_CUDA_GEMM_H

#include "runtime/core/Status.h"
#include "runtime/core/Tensor.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace shardc::rt::cuda::detail {

/// D [m, n] = op(A) [m, k] x B [k, n] (+ bias [m] per row) (+ D), column-major,
/// `batch` times with the given element strides; A is stored [m, k] (lda) or,
/// with transA, [k, m]; B [k, n] (ldb); D [m, n] (ldd). Float types; fp32
/// accumulation (fp64 for F64).
struct Gemm {
  DType dtype = DType::F32;
  int64_t m = 0, n = 0, k = 0;
  bool transA = false;
  int64_t lda = 1, ldb = 1, ldd = 1;
  int64_t batch = 1, strideA = 0, strideB = 0, strideD = 0;
  const void *a = nullptr, *b = nullptr;
  void *d = nullptr;
  const void *bias = nullptr; // through the bias epilogue
  bool accumulate = false;    // beta = 1: add onto D's contents
};

/// Enqueues `gemm` on `stream`. False (and nothing enqueued) when cuBLASLt
/// has no algorithm for it, which callers with a bias answer without the
/// epilogue; an error for cuBLASLt's failures.
StatusOr<bool> runGemm(const Gemm &gemm, cudaStream_t stream);

} // namespace shardc::rt::cuda::detail

#endif
