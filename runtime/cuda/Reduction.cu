//===- Reduction.cu - reduce_sum / mean / max / min kernels ---------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Reduction.h"

#include <type_traits>

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;
using kernels::ReduceOp;

/// Below this many elements per output, a thread per output does better
/// than a block per output.
constexpr int64_t kBlockPerOutputFrom = 128;

/// How one category of element types accumulates: floats in double (sums
/// as exact as on the CPU; max/min are exact anyway), integers in 64 bits.
template <bool Real> struct Reducer {
  using Value = std::conditional_t<Real, double, int64_t>;

  static __device__ Value identity(int op) {
    const auto kind = static_cast<ReduceOp>(op);
    if constexpr (Real)
      return kind == ReduceOp::Max ? -INFINITY : kind == ReduceOp::Min ? INFINITY : 0.0;
    else
      return kind == ReduceOp::Max ? INT64_MIN : kind == ReduceOp::Min ? INT64_MAX : 0;
  }

  static __device__ Value combine(int op, Value a, Value b) {
    switch (static_cast<ReduceOp>(op)) {
    // A NaN operand wins (a != a only holds for NaN).
    case ReduceOp::Max:
      return a != a || a > b ? a : b;
    case ReduceOp::Min:
      return a != a || a < b ? a : b;
    default:
      if constexpr (Real)
        return a + b;
      else
        return Value(uint64_t(a) + uint64_t(b)); // wraps
    }
  }

  static __device__ Value load(const void *data, DType dtype, int64_t i) {
    if constexpr (Real)
      return loadReal(data, dtype, i);
    else
      return loadInteger(data, dtype, i);
  }

  static __device__ void store(const ReduceArgs &args, int64_t o, Value acc) {
    const auto op = static_cast<ReduceOp>(args.op);
    const int64_t count = args.reducedCount;
    if constexpr (Real) {
      // Through fp32 first, like the CPU (which rounds the double to its
      // compute type before storing), so both round alike.
      const double value = op == ReduceOp::Mean ? acc / double(count) : acc;
      storeReal(args.out, args.dtype, o, double(float(value)));
    } else {
      Value value = acc;
      if (op == ReduceOp::Mean)
        value = count == 0 ? 0 : acc / count;
      else if (count == 0 && op == ReduceOp::Max)
        value = integerMin(args.dtype);
      else if (count == 0 && op == ReduceOp::Min)
        value = integerMax(args.dtype);
      storeInteger(args.out, args.dtype, o, uint64_t(value));
    }
  }
};

template <bool Real> __global__ void reduceBlockKernel(ReduceArgs args) {
  using R = Reducer<Real>;
  using Value = typename R::Value;
  __shared__ Value scratch[32];
  const int op = args.op;
  for (int64_t o = blockIdx.x; o < args.outCount; o += gridDim.x) {
    int64_t base[1];
    mapOffsets(args.kept, o, base);
    Value acc = R::identity(op);
    for (int64_t r = threadIdx.x; r < args.reducedCount; r += blockDim.x) {
      int64_t offset[1];
      mapOffsets(args.reduced, r, offset);
      acc = R::combine(op, acc, R::load(args.in, args.dtype, base[0] + offset[0]));
    }
    acc = blockReduce(
        acc, [op](Value a, Value b) { return R::combine(op, a, b); }, R::identity(op), scratch);
    if (threadIdx.x == 0)
      R::store(args, o, acc);
  }
}

template <bool Real> __global__ void reduceThreadKernel(ReduceArgs args) {
  using R = Reducer<Real>;
  using Value = typename R::Value;
  for (int64_t o = firstIndex(); o < args.outCount; o += gridStride()) {
    int64_t base[1];
    mapOffsets(args.kept, o, base);
    Value acc = R::identity(args.op);
    for (int64_t r = 0; r < args.reducedCount; ++r) {
      int64_t offset[1];
      mapOffsets(args.reduced, r, offset);
      acc = R::combine(args.op, acc, R::load(args.in, args.dtype, base[0] + offset[0]));
    }
    R::store(args, o, acc);
  }
}

template <bool Real> void launchAs(const ReduceArgs &args, cudaStream_t stream) {
  if (args.reducedCount >= kBlockPerOutputFrom) {
    const auto blocks = unsigned(args.outCount < (1 << 20) ? args.outCount : (1 << 20));
    reduceBlockKernel<Real><<<blocks, kThreads, 0, stream>>>(args);
  } else {
    reduceThreadKernel<Real><<<blocksFor(args.outCount), kThreads, 0, stream>>>(args);
  }
}

} // namespace

void launchReduce(const ReduceArgs &args, cudaStream_t stream) {
  const bool real = args.dtype == DType::F32 || args.dtype == DType::F16 ||
                    args.dtype == DType::BF16 || args.dtype == DType::F64;
  if (real)
    launchAs<true>(args, stream);
  else
    launchAs<false>(args, stream);
}

} // namespace shardc::rt::cuda::detail
