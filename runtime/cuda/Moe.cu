//===- Moe.cu - the routed experts' row gather and weighted sum -----------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Moe.h"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// A thread per Unit of every output row; a negative source zeroes the row.
template <typename Unit> __global__ void rowGatherKernel(RowGatherArgs args, int64_t unitsPerRow) {
  const Unit *in = static_cast<const Unit *>(args.in);
  Unit *out = static_cast<Unit *>(args.out);
  for (int64_t item = firstIndex(); item < args.rows * unitsPerRow; item += gridStride()) {
    const int64_t row = item / unitsPerRow, unit = item - row * unitsPerRow;
    const int64_t source = args.source[row];
    out[item] = source >= 0 ? in[source * unitsPerRow + unit] : Unit{};
  }
}

template <typename Unit> void launchRowGatherBy(const RowGatherArgs &args, cudaStream_t stream) {
  const int64_t unitsPerRow = args.rowBytes / int64_t(sizeof(Unit));
  rowGatherKernel<Unit>
      <<<blocksFor(args.rows * unitsPerRow), kThreads, 0, stream>>>(args, unitsPerRow);
}

/// A thread per element of y; each reads its token's slots in order, so the
/// sum's order is the CPU kernel's.
template <typename T> __global__ void weightedSumKernel(WeightedSumArgs args) {
  const T *own = static_cast<const T *>(args.own);
  const T *gates = static_cast<const T *>(args.gates);
  T *y = static_cast<T *>(args.y);
  for (int64_t item = firstIndex(); item < args.tokens * args.hidden; item += gridStride()) {
    const int64_t t = item / args.hidden, h = item - t * args.hidden;
    float sum = 0;
    for (int64_t j = 0; j < args.slots; ++j) {
      const int64_t row = args.positions[t * args.slots + j];
      if (row >= 0)
        sum += toFloat(gates[t * args.slots + j]) * toFloat(own[row * args.hidden + h]);
    }
    y[item] = fromFloat<T>(sum);
  }
}

bool fits(const RowGatherArgs &args, int64_t unit) {
  return args.rowBytes % unit == 0 && reinterpret_cast<uintptr_t>(args.in) % unit == 0 &&
         reinterpret_cast<uintptr_t>(args.out) % unit == 0;
}

} // namespace

void launchRowGather(const RowGatherArgs &args, cudaStream_t stream) {
  // The widest access every row start allows: 16-byte vectors for the
  // usual hidden sizes.
  if (fits(args, 16))
    launchRowGatherBy<uint4>(args, stream);
  else if (fits(args, 8))
    launchRowGatherBy<uint2>(args, stream);
  else if (fits(args, 4))
    launchRowGatherBy<uint32_t>(args, stream);
  else if (fits(args, 2))
    launchRowGatherBy<uint16_t>(args, stream);
  else
    launchRowGatherBy<uint8_t>(args, stream);
}

void launchWeightedSum(const WeightedSumArgs &args, cudaStream_t stream) {
  const unsigned blocks = blocksFor(args.tokens * args.hidden);
  switch (args.dtype) {
  case DType::F16:
    weightedSumKernel<__half><<<blocks, kThreads, 0, stream>>>(args);
    break;
  case DType::BF16:
    weightedSumKernel<__nv_bfloat16><<<blocks, kThreads, 0, stream>>>(args);
    break;
  default:
    weightedSumKernel<float><<<blocks, kThreads, 0, stream>>>(args);
    break;
  }
}

} // namespace shardc::rt::cuda::detail
