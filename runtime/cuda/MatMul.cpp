//===- MatMul.cpp - matmul and linear through cuBLASLt: host side ---------===//
#include "runtime/cuda/MatMul.h"

#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/Gemm.h"

namespace shardc::rt::cuda {

using namespace detail;

namespace {

/// Runs `gemm`, which must have an algorithm; describes the row-major
/// problem [rows, k] x [k, cols] in the error otherwise.
Status runOrFail(const char *op, const Gemm &gemm, cudaStream_t stream) {
  auto ran = runGemm(gemm, stream);
  if (!ran)
    return fail(op, ran.status().message());
  if (!*ran)
    return fail(op, "cuBLASLt has no algorithm for a " + std::string(dtypeName(gemm.dtype)) +
                        " GEMM of [" + std::to_string(gemm.n) + ", " + std::to_string(gemm.k) +
                        "] x [" + std::to_string(gemm.k) + ", " + std::to_string(gemm.m) + "]");
  return Status::success();
}

/// out = zeros, or every row the bias.
Status fillRows(const char *op, const TensorView &out, const void *bias, int64_t rows, int64_t n,
                cudaStream_t stream) {
  BiasFillArgs args;
  args.out = out.data;
  args.bias = bias;
  args.dtype = out.dtype;
  args.rows = rows;
  args.n = n;
  launchBiasFill(args, stream);
  return launchStatus(op);
}

} // namespace

Status matmul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
              const LaunchContext &context) {
  const char *name = "matmul";
  MatMulDims dims;
  SHARDC_KERNEL_TRY(checkMatMul(lhs, rhs, out, dims));
  const Shape &aBatch = dims.aBatch, &bBatch = dims.bBatch, &batch = dims.batch;
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  // The batches, in matrices: operand 0 out (dense), 1 lhs, 2 rhs.
  const Walk<3> batches =
      Walk<3>::make(batch, {rowMajorStrides(batch), broadcastStrides(aBatch, batch),
                            broadcastStrides(bBatch, batch)});
  IndexMap<3> map;
  SHARDC_KERNEL_TRY(toIndexMap(name, batches, map));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  const int64_t count = numElements(batch);

  if (isIntType(lhs.dtype)) {
    IntegerMatMulArgs args;
    args.out = out.data;
    args.lhs = lhs.data;
    args.rhs = rhs.data;
    args.dtype = lhs.dtype;
    args.batches = count;
    args.m = m;
    args.n = n;
    args.k = k;
    args.map = map;
    launchIntegerMatMul(args, context.stream);
    return launchStatus(name);
  }
  if (k == 0) // nothing to sum: zeros
    return fillRows(name, out, nullptr, count * m, n, context.stream);

  const size_t size = dtypeSize(lhs.dtype);
  const auto *lhsBytes = static_cast<const char *>(lhs.data);
  const auto *rhsBytes = static_cast<const char *>(rhs.data);
  auto *outBytes = static_cast<char *>(out.data);
  // Column-major: out^T [n, m] = rhs^T [n, k] x lhs^T [k, m] per batch.
  Gemm gemm;
  gemm.dtype = lhs.dtype;
  gemm.m = n;
  gemm.n = m;
  gemm.k = k;
  gemm.lda = n;
  gemm.ldb = k;
  gemm.ldd = n;
  bool rhsShared = true;
  for (int64_t stride : broadcastStrides(bBatch, batch))
    rhsShared = rhsShared && stride == 0;
  if (rhsShared && numElements(aBatch) == count) {
    // One tall GEMM: every batch of lhs, as rows, against the one rhs.
    gemm.n = count * m;
    gemm.a = rhs.data;
    gemm.b = lhs.data;
    gemm.d = out.data;
    return runOrFail(name, gemm, context.stream);
  }
  // Runs of batches along the innermost batch dim: one strided-batched GEMM
  // where both sides step through it, else a GEMM per batch.
  Status status = Status::success();
  batches.run(0, count, {0, 0, 0}, [&](const std::array<int64_t, 3> &at, int64_t run) {
    const int64_t outStep = batches.innerStride(0), lhsStep = batches.innerStride(1);
    const int64_t rhsStep = batches.innerStride(2);
    const bool strided = lhsStep != 0 && rhsStep != 0;
    for (int64_t e = 0; status && e < (strided ? 1 : run); ++e) {
      Gemm one = gemm;
      one.a = rhsBytes + (at[2] + e * rhsStep) * k * n * int64_t(size);
      one.b = lhsBytes + (at[1] + e * lhsStep) * m * k * int64_t(size);
      one.d = outBytes + (at[0] + e * outStep) * m * n * int64_t(size);
      if (strided) {
        one.batch = run;
        one.strideA = rhsStep * k * n;
        one.strideB = lhsStep * m * k;
        one.strideD = outStep * m * n;
      }
      status = runOrFail(name, one, context.stream);
    }
  });
  return status;
}

Status linear(const TensorView &input, const TensorView &weight, const TensorView *bias,
              bool transposeWeight, const TensorView &out, const LaunchContext &context) {
  const char *name = "linear";
  LinearDims dims;
  SHARDC_KERNEL_TRY(checkLinear(input, weight, bias, transposeWeight, out, dims));
  const int64_t m = dims.m, k = dims.k, n = dims.n;
  if (context.checkOnly || m == 0 || n == 0)
    return Status::success();
  const void *biasData = bias ? bias->data : nullptr;
  if (k == 0)
    return fillRows(name, out, biasData, m, n, context.stream);

  // Column-major: out^T [n, m] = W' [n, k] x input^T [k, m], where W' is
  // the weight [k, n] row-major (col-major [n, k], ld n) or, transposed,
  // the weight [n, k] row-major (col-major [k, n], ld k) read transposed.
  Gemm gemm;
  gemm.dtype = input.dtype;
  gemm.m = n;
  gemm.n = m;
  gemm.k = k;
  gemm.transA = transposeWeight;
  gemm.lda = transposeWeight ? k : n;
  gemm.ldb = k;
  gemm.ldd = n;
  gemm.a = weight.data;
  gemm.b = input.data;
  gemm.d = out.data;
  if (biasData) {
    gemm.bias = biasData;
    auto ran = runGemm(gemm, context.stream);
    if (!ran)
      return fail(name, ran.status().message());
    if (*ran)
      return Status::success();
    // No algorithm with the bias epilogue: start from the bias and let the
    // GEMM accumulate onto it.
    SHARDC_KERNEL_TRY(fillRows(name, out, biasData, m, n, context.stream));
    gemm.bias = nullptr;
    gemm.accumulate = true;
  }
  return runOrFail(name, gemm, context.stream);
}

} // namespace shardc::rt::cuda
