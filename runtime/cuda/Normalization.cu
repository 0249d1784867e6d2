//===- Normalization.cu - layer_norm and rms_norm kernels -----------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Normalization.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// Rows up to this long get a warp each; longer ones a block.
constexpr int64_t kWarpRowsUpTo = 2048;

/// Scale or bias element j of the normalized dims.
template <typename T>
__device__ inline float parameterAt(const void *data, bool direct, const IndexMap<1> &map,
                                    int64_t j) {
  const T *values = static_cast<const T *>(data);
  if (direct)
    return toFloat(values[j]);
  int64_t at[1];
  mapOffsets(map, j, at);
  return toFloat(values[at[0]]);
}

/// kGroup threads per row (a warp, or the whole block); layer_norm or
/// rms_norm by args.rms, the same for every thread.
template <typename T, int kGroup> __global__ void normKernel(NormArgs args) {
  __shared__ float scratch[32];
  constexpr int kLanes = 16 / sizeof(T);
  const T *in = static_cast<const T *>(args.in);
  T *out = static_cast<T *>(args.out);
  const int groupsPerBlock = blockDim.x / kGroup;
  const int lane = threadIdx.x % kGroup;
  const int64_t n = args.n;
  for (int64_t row = int64_t(blockIdx.x) * groupsPerBlock + threadIdx.x / kGroup; row < args.rows;
       row += int64_t(gridDim.x) * groupsPerBlock) {
    const T *x = in + row * n;
    T *y = out + row * n;
    // The statistics, of x - shift (Normalization.h), in one read.
    const float shift = args.rms ? 0.0f : toFloat(x[0]);
    float sum = 0.0f, squares = 0.0f;
    auto add = [&](float value) {
      const float d = value - shift;
      sum += d;
      squares += d * d;
    };
    if (args.vectorized) {
      const auto *packs = reinterpret_cast<const Pack<T> *>(x);
      for (int64_t p = lane; p < n / kLanes; p += kGroup) {
        const Pack<T> v = packs[p];
#pragma unroll
        for (int e = 0; e < kLanes; ++e)
          add(toFloat(v.lane[e]));
      }
    } else {
      for (int64_t j = lane; j < n; j += kGroup)
        add(toFloat(x[j]));
    }
    if (!args.rms)
      sum = groupReduce<kGroup>(sum, SumOp(), 0.0f, scratch);
    squares = groupReduce<kGroup>(squares, SumOp(), 0.0f, scratch);
    const float count = float(n);
    const float mean = args.rms ? 0.0f : sum / count;
    const float variance = args.rms ? squares / count : fmaxf(squares / count - mean * mean, 0.0f);
    const float rstd = 1.0f / sqrtf(variance + args.epsilon);

    // The output, reading the row again (every read of the group is done:
    // the reductions above wait for all of its threads, so in place is safe).
    auto normalized = [&](int64_t j, float value) {
      const float g = parameterAt<T>(args.scale, args.scaleDirect, args.scaleMap, j);
      if (args.rms)
        return value * rstd * g;
      float result = ((value - shift) - mean) * rstd * g;
      if (args.bias)
        result += parameterAt<T>(args.bias, args.biasDirect, args.biasMap, j);
      return result;
    };
    if (args.vectorized) {
      const auto *inPacks = reinterpret_cast<const Pack<T> *>(x);
      auto *outPacks = reinterpret_cast<Pack<T> *>(y);
      for (int64_t p = lane; p < n / kLanes; p += kGroup) {
        const Pack<T> v = inPacks[p];
        Pack<T> r;
#pragma unroll
        for (int e = 0; e < kLanes; ++e)
          r.lane[e] = fromFloat<T>(normalized(p * kLanes + e, toFloat(v.lane[e])));
        outPacks[p] = r;
      }
    } else {
      for (int64_t j = lane; j < n; j += kGroup)
        y[j] = fromFloat<T>(normalized(j, toFloat(x[j])));
    }
  }
}

template <typename T> void launchAs(const NormArgs &args, cudaStream_t stream) {
  if (args.n <= kWarpRowsUpTo) {
    constexpr int kRowsPerBlock = kThreads / 32;
    normKernel<T, 32><<<blocksFor(args.rows, kRowsPerBlock), kThreads, 0, stream>>>(args);
  } else {
    normKernel<T, kThreads><<<blocksFor(args.rows, 1), kThreads, 0, stream>>>(args);
  }
}

} // namespace

void launchNorm(const NormArgs &args, cudaStream_t stream) {
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
