//===- Rotary.cu - rotary position embedding kernel -----------------------===//
#include "runtime/cuda/Attention.h"
#include "runtime/cuda/DeviceSupport.cuh"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// A thread per rotated pair, and (unless in place) per passed-through
/// feature, of each row; neighbouring threads take neighbouring pairs.
template <typename T> __global__ void rotaryKernel(RotaryArgs args) {
  const T *in = static_cast<const T *>(args.in);
  const T *cosTable = static_cast<const T *>(args.cos);
  const T *sinTable = static_cast<const T *>(args.sin);
  T *out = static_cast<T *>(args.out);
  const int64_t half = args.rotated / 2;
  const int64_t passed = args.inPlace ? 0 : args.features - args.rotated;
  const int64_t perRow = half + passed;
  for (int64_t item = firstIndex(); item < args.rows * perRow; item += gridStride()) {
    const int64_t row = item / perRow, p = item % perRow;
    const T *x = in + row * args.features;
    T *y = out + row * args.features;
    if (p >= half) {
      const int64_t j = args.rotated + (p - half);
      y[j] = x[j];
      continue;
    }
    int64_t tableRow[1];
    mapOffsets(args.table, row, tableRow);
    const T *c = cosTable + tableRow[0] * args.rotated;
    const T *s = sinTable + tableRow[0] * args.rotated;
    const int64_t a = args.interleaved ? 2 * p : p;
    const int64_t b = args.interleaved ? 2 * p + 1 : p + half;
    // Both members are read before either is written: safe in place.
    const float xa = toFloat(x[a]), xb = toFloat(x[b]);
    y[a] = fromFloat<T>(xa * toFloat(c[a]) - xb * toFloat(s[a]));
    y[b] = fromFloat<T>(xb * toFloat(c[b]) + xa * toFloat(s[b]));
  }
}

} // namespace

void launchRotary(const RotaryArgs &args, cudaStream_t stream) {
  const int64_t perRow = args.rotated / 2 + (args.inPlace ? 0 : args.features - args.rotated);
  const unsigned blocks = blocksFor(args.rows * perRow);
  switch (args.dtype) {
  case DType::F16:
    rotaryKernel<__half><<<blocks, kThreads, 0, stream>>>(args);
    break;
  case DType::BF16:
    rotaryKernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(args);
    break;
  default:
    rotaryKernel<float><<<blocks, kThreads, 0, stream>>>(args);
    break;
  }
}

} // namespace shardc::rt::cuda::detail
