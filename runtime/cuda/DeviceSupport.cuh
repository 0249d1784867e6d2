//===- DeviceSupport.cuh - what every CUDA kernel family needs --*- CUDA -*-===//
//
// Device-side helpers shared by the .cu files (and only by them):
//  - launch geometry: grid-stride loops with 64-bit indices, so a tensor of
//    more than 2^31 elements is walked correctly by any grid;
//  - element access: fp16/bf16 stored as such and computed in fp32 (the
//    static path of the hot kernels, one template instantiation per type),
//    and loads/stores by a runtime dtype for the kernels that are not hot
//    (integer arithmetic, compare, cast): one instantiation for every type,
//    the switch being the same for all threads of a launch;
//  - IndexMap offsets (broadcasting, transposes, slices);
//  - warp and block reductions by shuffles;
//  - reporting a device-side error (Launch.h).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_DEVICESUPPORT_CUH
#define SHARDC_RUNTIME_CUDA_DEVICESUPPORT_CUH

#include "runtime/core/Tensor.h"
#include "runtime/cuda/Launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace shardc::rt::cuda::device {

//===----------------------------------------------------------------------===//
// Launch geometry
//===----------------------------------------------------------------------===//

/// Threads per block of the elementwise and copy kernels.
constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `count` items, `threads` per block.
/// Capped: past about a million blocks each thread just takes more items.
inline unsigned blocksFor(int64_t count, int threads = kThreads) {
  const int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > (1 << 20) ? (1 << 20) : blocks);
}

__device__ inline int64_t firstIndex() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t gridStride() { return int64_t(gridDim.x) * blockDim.x; }

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

__device__ inline float toFloat(float x) { return x; }
__device__ inline float toFloat(__half x) { return __half2float(x); }
__device__ inline float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ T fromFloat(float x);
template <> __device__ inline float fromFloat<float>(float x) { return x; }
template <> __device__ inline __half fromFloat<__half>(float x) { return __float2half_rn(x); }
template <> __device__ inline __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// 16 bytes of elements, loaded and stored as one vector access.
template <typename T> struct alignas(16) Pack { T lane[16 / sizeof(T)]; };

__device__ inline bool isRealType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F64;
}

/// Element i of a float tensor of any float dtype, exactly, as a double.
__device__ inline double loadReal(const void *data, DType dtype, int64_t i) {
  switch (dtype) {
  case DType::F32:
    return static_cast<const float *>(data)[i];
  case DType::F16:
    return __half2float(static_cast<const __half *>(data)[i]);
  case DType::BF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(data)[i]);
  case DType::F64:
    return static_cast<const double *>(data)[i];
  default:
    return 0.0;
  }
}

/// Element i of an integer (sign- or zero-extended) or bool tensor.
__device__ inline int64_t loadInteger(const void *data, DType dtype, int64_t i) {
  switch (dtype) {
  case DType::I64:
    return static_cast<const int64_t *>(data)[i];
  case DType::I32:
    return static_cast<const int32_t *>(data)[i];
  case DType::I16:
    return static_cast<const int16_t *>(data)[i];
  case DType::I8:
    return static_cast<const int8_t *>(data)[i];
  case DType::U8:
    return static_cast<const uint8_t *>(data)[i];
  case DType::Bool:
    return static_cast<const uint8_t *>(data)[i] != 0;
  default:
    return 0;
  }
}

/// Any numeric element as a double (integers beyond 2^53 round).
__device__ inline double loadNumber(const void *data, DType dtype, int64_t i) {
  return isRealType(dtype) ? loadReal(data, dtype, i) : double(loadInteger(data, dtype, i));
}

/// Stores the low bits of `bits` (two's complement wrap-around to the
/// element's width); Bool stores bits != 0.
__device__ inline void storeInteger(void *data, DType dtype, int64_t i, uint64_t bits) {
  switch (dtype) {
  case DType::I64:
    static_cast<int64_t *>(data)[i] = static_cast<int64_t>(bits);
    break;
  case DType::I32:
    static_cast<int32_t *>(data)[i] = static_cast<int32_t>(bits);
    break;
  case DType::I16:
    static_cast<int16_t *>(data)[i] = static_cast<int16_t>(bits);
    break;
  case DType::I8:
    static_cast<int8_t *>(data)[i] = static_cast<int8_t>(bits);
    break;
  case DType::U8:
    static_cast<uint8_t *>(data)[i] = static_cast<uint8_t>(bits);
    break;
  case DType::Bool:
    static_cast<uint8_t *>(data)[i] = bits != 0;
    break;
  default:
    break;
  }
}

/// Stores a value of a float computation, rounded once to the element type.
__device__ inline void storeReal(void *data, DType dtype, int64_t i, double value) {
  switch (dtype) {
  case DType::F32:
    static_cast<float *>(data)[i] = __double2float_rn(value);
    break;
  case DType::F16:
    static_cast<__half *>(data)[i] = __double2half(value);
    break;
  case DType::BF16:
    static_cast<__nv_bfloat16 *>(data)[i] = __double2bfloat16(value);
    break;
  case DType::F64:
    static_cast<double *>(data)[i] = value;
    break;
  default:
    break;
  }
}

/// The smallest and largest value of an integer dtype.
__device__ inline int64_t integerMin(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return INT64_MIN;
  case DType::I32:
    return INT32_MIN;
  case DType::I16:
    return INT16_MIN;
  case DType::I8:
    return INT8_MIN;
  default:
    return 0; // U8, Bool
  }
}
__device__ inline int64_t integerMax(DType dtype) {
  switch (dtype) {
  case DType::I64:
    return INT64_MAX;
  case DType::I32:
    return INT32_MAX;
  case DType::I16:
    return INT16_MAX;
  case DType::I8:
    return INT8_MAX;
  case DType::U8:
    return UINT8_MAX;
  default:
    return 1; // Bool
  }
}

/// A float truncated toward zero into an integer dtype's range: NaN gives 0,
/// values past the range its min or max (the CPU backend's cast rule).
__device__ inline int64_t saturatingTruncate(double value, DType dtype) {
  if (value != value)
    return 0;
  const double truncated = trunc(value);
  const int64_t low = integerMin(dtype), high = integerMax(dtype);
  if (truncated <= double(low))
    return low;
  // INT64_MAX rounds up to 2^63 as a double: >= keeps 2^63 itself saturating.
  if (truncated >= double(high))
    return high;
  return static_cast<int64_t>(truncated);
}

/// Element i of an index tensor, I64 or (indices64 false) I32.
__device__ inline int64_t indexAt(const void *indices, bool indices64, int64_t i) {
  return indices64 ? static_cast<const int64_t *>(indices)[i]
                   : int64_t(static_cast<const int32_t *>(indices)[i]);
}

//===----------------------------------------------------------------------===//
// Index maps
//===----------------------------------------------------------------------===//

/// The N operand offsets of element `linear` of the map's row-major order.
template <int N>
__device__ inline void mapOffsets(const IndexMap<N> &map, int64_t linear, int64_t (&offsets)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k)
    offsets[k] = 0;
  for (int d = map.rank - 1; d >= 0; --d) {
    const int64_t size = map.shape[d];
    const int64_t quotient = linear / size;
    const int64_t index = linear - quotient * size;
    linear = quotient;
#pragma unroll
    for (int k = 0; k < N; ++k)
      offsets[k] += index * map.strides[k][d];
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct SumOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
/// fmaxf/fminf ignore a NaN operand: the callers that must propagate NaN
/// track it separately.
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// Reduces over the 32 lanes of a warp; every lane gets the result. All lanes
/// must take part.
template <typename T, typename Op> __device__ inline T warpReduce(T value, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// Reduces over the block (blockDim.x a multiple of 32, every thread taking
/// part); every thread gets the result. `scratch` holds 32 values in shared
/// memory and may be reused by the next call.
template <typename T, typename Op>
__device__ inline T blockReduce(T value, Op op, T identity, T *scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  value = warpReduce(value, op);
  __syncthreads(); // the previous call's readers are done with scratch
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  value = lane < warps ? scratch[lane] : identity;
  return warpReduce(value, op);
}

/// Reduces over the kGroup threads that share a row: a warp (kGroup 32) or
/// the whole block (kGroup == blockDim.x).
template <int kGroup, typename T, typename Op>
__device__ inline T groupReduce(T value, Op op, T identity, T *scratch) {
  if constexpr (kGroup == 32)
    return warpReduce(value, op);
  else
    return blockReduce(value, op, identity, scratch);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Records the first device-side error of a stream (see Launch.h). The
/// thread that claims the code word (0 -> its code) is the only one that
/// writes the value and the limit, so the report never pairs one thread's
/// index with another's limit; the host reads it after the stream ends.
__device__ inline void reportError(DeviceError *error, DeviceErrorCode code, int64_t value,
                                   int64_t limit) {
  if (!error)
    return;
  if (atomicCAS(&error->code, 0, static_cast<int32_t>(code)) != 0)
    return;
  error->value = value;
  error->limit = limit;
  __threadfence_system();
}

} // namespace shardc::rt::cuda::device

#endif
