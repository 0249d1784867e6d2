//===- Softmax.cu - softmax kernels ---------------------------------------===//
//
// Three passes over each row (maximum; sum of exp(x - max); the scaled exps):
// the row is read three times, from L2 after the first, which costs less
// than holding arbitrarily long rows on chip. A row per warp up to 1024
// elements, so short rows (attention scores, router logits) keep every lane
// busy; a row per block beyond.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Reduction.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

constexpr int64_t kWarpRowsUpTo = 1024;

/// Rows of `dim` contiguous elements, kGroup threads per row.
template <typename T, int kGroup> __global__ void softmaxRowsKernel(SoftmaxArgs args) {
  __shared__ float scratch[32];
  const T *in = static_cast<const T *>(args.in);
  T *out = static_cast<T *>(args.out);
  const int groupsPerBlock = blockDim.x / kGroup;
  const int lane = threadIdx.x % kGroup;
  const int64_t dim = args.dim;
  for (int64_t row = int64_t(blockIdx.x) * groupsPerBlock + threadIdx.x / kGroup; row < args.outer;
       row += int64_t(gridDim.x) * groupsPerBlock) {
    const T *x = in + row * dim;
    T *y = out + row * dim;
    // fmaxf skips a NaN; exp(NaN - max) then makes the sum, and so every
    // output of the row, NaN, as on the CPU.
    float maximum = -INFINITY;
    for (int64_t j = lane; j < dim; j += kGroup)
      maximum = fmaxf(maximum, toFloat(x[j]));
    maximum = groupReduce<kGroup>(maximum, MaxOp(), -INFINITY, scratch);
    float sum = 0.0f;
    for (int64_t j = lane; j < dim; j += kGroup)
      sum += expf(toFloat(x[j]) - maximum);
    sum = groupReduce<kGroup>(sum, SumOp(), 0.0f, scratch);
    const float scale = 1.0f / sum;
    for (int64_t j = lane; j < dim; j += kGroup)
      y[j] = fromFloat<T>(expf(toFloat(x[j]) - maximum) * scale);
  }
}

/// Softmax along a non-last axis: a thread per column (o, i), reading
/// x[o, :, i]; neighbouring threads read neighbouring elements.
template <typename T> __global__ void softmaxColumnsKernel(SoftmaxArgs args) {
  const T *in = static_cast<const T *>(args.in);
  T *out = static_cast<T *>(args.out);
  const int64_t dim = args.dim, inner = args.inner;
  for (int64_t column = firstIndex(); column < args.outer * inner; column += gridStride()) {
    const int64_t base = column / inner * dim * inner + column % inner;
    const T *x = in + base;
    T *y = out + base;
    float maximum = -INFINITY;
    for (int64_t j = 0; j < dim; ++j)
      maximum = fmaxf(maximum, toFloat(x[j * inner]));
    float sum = 0.0f;
    for (int64_t j = 0; j < dim; ++j)
      sum += expf(toFloat(x[j * inner]) - maximum);
    const float scale = 1.0f / sum;
    for (int64_t j = 0; j < dim; ++j)
      y[j * inner] = fromFloat<T>(expf(toFloat(x[j * inner]) - maximum) * scale);
  }
}

template <typename T> void launchAs(const SoftmaxArgs &args, cudaStream_t stream) {
  if (args.inner != 1) {
    softmaxColumnsKernel<T><<<blocksFor(args.outer * args.inner), kThreads, 0, stream>>>(args);
  } else if (args.dim <= kWarpRowsUpTo) {
    constexpr int kRowsPerBlock = kThreads / 32;
    const unsigned blocks = blocksFor(args.outer, kRowsPerBlock);
    softmaxRowsKernel<T, 32><<<blocks, kThreads, 0, stream>>>(args);
  } else {
    softmaxRowsKernel<T, kThreads><<<blocksFor(args.outer, 1), kThreads, 0, stream>>>(args);
  }
}

} // namespace

void launchSoftmax(const SoftmaxArgs &args, cudaStream_t stream) {
  switch (args.dtype) {
  case DType::F16:
    launchAs<__half>(args, stream);
    break;
  case DType::BF16:
    launchAs<__nv_bfloat16>(args, stream);
    break;
  default:
    launchAs<float>(args, stream);
    break;
  }
}

} // namespace shardc::rt::cuda::detail
