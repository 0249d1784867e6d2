//===- MatMul.cu - integer matmul and the bias fill -----------------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/MatMul.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// A thread per output element; exact modulo 2^64, then wrapped, which is
/// the same as wrapping after every step.
__global__ void integerMatMulKernel(IntegerMatMulArgs args) {
  const int64_t total = args.batches * args.m * args.n;
  for (int64_t e = firstIndex(); e < total; e += gridStride()) {
    const int64_t j = e % args.n, i = e / args.n % args.m, batch = e / (args.m * args.n);
    int64_t at[3];
    mapOffsets(args.map, batch, at);
    const int64_t lhs = at[1] * args.m * args.k + i * args.k;
    const int64_t rhs = at[2] * args.k * args.n + j;
    uint64_t sum = 0;
    for (int64_t p = 0; p < args.k; ++p)
      sum += uint64_t(loadInteger(args.lhs, args.dtype, lhs + p)) *
             uint64_t(loadInteger(args.rhs, args.dtype, rhs + p * args.n));
    storeInteger(args.out, args.dtype, e, sum);
  }
}

__global__ void biasFillKernel(BiasFillArgs args) {
  for (int64_t e = firstIndex(); e < args.rows * args.n; e += gridStride()) {
    const double value = args.bias ? loadReal(args.bias, args.dtype, e % args.n) : 0.0;
    storeReal(args.out, args.dtype, e, value); // exact: a bias element or 0
  }
}

} // namespace

void launchIntegerMatMul(const IntegerMatMulArgs &args, cudaStream_t stream) {
  integerMatMulKernel<<<blocksFor(args.batches * args.m * args.n), kThreads, 0, stream>>>(args);
}

void launchBiasFill(const BiasFillArgs &args, cudaStream_t stream) {
  biasFillKernel<<<blocksFor(args.rows * args.n), kThreads, 0, stream>>>(args);
}

} // namespace shardc::rt::cuda::detail
