//===- TopK.cu - top-k by bitonic sort or by repeated selection -----------===//
//
// Elements are ordered by (key, position): the key is the value (floats as
// doubles, integers and bools as int64, so every type keeps its exact
// order), NaN above every number, ties broken by the lower position. That
// order is total, so any correct sort gives exactly the CPU kernel's result.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceSupport.cuh"
#include "runtime/cuda/Reduction.h"

#include <algorithm>
#include <type_traits>

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

/// Rows up to this long are sorted in shared memory (2048 x 12 bytes).
constexpr int64_t kSortUpTo = 2048;

template <typename Key> struct Order {
  bool largest;

  /// "a orders above b": NaN above every number, equal NaNs equal.
  __device__ static bool above(Key a, Key b) {
    if constexpr (std::is_floating_point_v<Key>) {
      if (a != a)
        return b == b;
      return b == b && a > b;
    } else {
      return a > b;
    }
  }

  /// Whether element (ka, ia) comes before (kb, ib) in the result.
  __device__ bool first(Key ka, int64_t ia, Key kb, int64_t ib) const {
    if (largest ? above(ka, kb) : above(kb, ka))
      return true;
    if (largest ? above(kb, ka) : above(ka, kb))
      return false;
    return ia < ib;
  }
};

template <typename Key> __device__ inline Key keyAt(const void *in, DType dtype, int64_t i) {
  if constexpr (std::is_floating_point_v<Key>)
    return loadReal(in, dtype, i);
  else
    return loadInteger(in, dtype, i);
}

/// values[to] = in[from], whatever the element type.
__device__ inline void copyValue(void *values, int64_t to, const void *in, int64_t from,
                                 DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    static_cast<uint64_t *>(values)[to] = static_cast<const uint64_t *>(in)[from];
    break;
  case DType::F32:
  case DType::I32:
    static_cast<uint32_t *>(values)[to] = static_cast<const uint32_t *>(in)[from];
    break;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    static_cast<uint16_t *>(values)[to] = static_cast<const uint16_t *>(in)[from];
    break;
  default:
    static_cast<uint8_t *>(values)[to] = static_cast<const uint8_t *>(in)[from];
    break;
  }
}

/// A block per row: the row (padded to `size`, a power of two, with slots
/// that order last) bitonic-sorted in shared memory, then its first k out.
template <typename Key> __global__ void topkSortKernel(TopKArgs args, int size) {
  extern __shared__ uint64_t sharedWords[]; // 8-byte aligned for the keys
  Key *keys = reinterpret_cast<Key *>(sharedWords);
  int32_t *slots = reinterpret_cast<int32_t *>(keys + size);
  const Order<Key> order{args.largest};
  // Padding (slot -1) comes after everything.
  auto before = [&](int a, int b) {
    if (slots[a] < 0)
      return false;
    if (slots[b] < 0)
      return true;
    return order.first(keys[a], slots[a], keys[b], slots[b]);
  };
  const int64_t rows = args.outer * args.inner;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t o = row / args.inner, i = row % args.inner;
    const int64_t base = o * args.dim * args.inner + i;
    for (int t = threadIdx.x; t < size; t += blockDim.x) {
      slots[t] = t < args.dim ? t : -1;
      keys[t] = t < args.dim ? keyAt<Key>(args.in, args.dtype, base + t * args.inner) : Key(0);
    }
    __syncthreads();
    for (int span = 2; span <= size; span <<= 1) {
      for (int stride = span >> 1; stride > 0; stride >>= 1) {
        for (int t = threadIdx.x; t < size; t += blockDim.x) {
          const int partner = t ^ stride;
          if (partner <= t)
            continue;
          // Sequences with (t & span) == 0 sort into the result order, the
          // others into the reverse; the last span sorts everything.
          const bool ascending = (t & span) == 0;
          if (ascending ? before(partner, t) : before(t, partner)) {
            const Key key = keys[t];
            keys[t] = keys[partner];
            keys[partner] = key;
            const int32_t slot = slots[t];
            slots[t] = slots[partner];
            slots[partner] = slot;
          }
        }
        __syncthreads();
      }
    }
    for (int64_t r = threadIdx.x; r < args.k; r += blockDim.x) {
      const int64_t at = (o * args.k + r) * args.inner + i;
      copyValue(args.values, at, args.in, base + int64_t(slots[r]) * args.inner, args.dtype);
      args.indices[at] = slots[r];
    }
    __syncthreads(); // the next row overwrites shared memory
  }
}

/// The better of two candidates (slot -1: none).
template <typename Key>
__device__ inline void keepFirst(const Order<Key> &order, Key &key, int64_t &slot, Key otherKey,
                                 int64_t otherSlot) {
  if (otherSlot >= 0 && (slot < 0 || order.first(otherKey, otherSlot, key, slot))) {
    key = otherKey;
    slot = otherSlot;
  }
}

/// A block per row, k passes: pass r finds the first element (in the
/// result order) after the one pass r - 1 found.
template <typename Key> __global__ void topkSelectKernel(TopKArgs args) {
  __shared__ Key warpKeys[32];
  __shared__ int64_t warpSlots[32];
  const Order<Key> order{args.largest};
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int64_t rows = args.outer * args.inner;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t o = row / args.inner, i = row % args.inner;
    const int64_t base = o * args.dim * args.inner + i;
    Key previousKey = Key(0);
    int64_t previousSlot = -1;
    for (int64_t r = 0; r < args.k; ++r) {
      Key key = Key(0);
      int64_t slot = -1;
      for (int64_t t = threadIdx.x; t < args.dim; t += blockDim.x) {
        const Key candidate = keyAt<Key>(args.in, args.dtype, base + t * args.inner);
        if (previousSlot >= 0 && !order.first(previousKey, previousSlot, candidate, t))
          continue; // taken by an earlier pass
        keepFirst(order, key, slot, candidate, t);
      }
      for (int offset = 16; offset > 0; offset >>= 1) {
        const Key otherKey = __shfl_xor_sync(0xffffffffu, key, offset);
        const int64_t otherSlot = __shfl_xor_sync(0xffffffffu, slot, offset);
        keepFirst(order, key, slot, otherKey, otherSlot);
      }
      if (lane == 0) {
        warpKeys[warp] = key;
        warpSlots[warp] = slot;
      }
      __syncthreads();
      key = Key(0);
      slot = -1;
      for (int w = 0; w < warps; ++w)
        keepFirst(order, key, slot, warpKeys[w], warpSlots[w]);
      __syncthreads(); // every thread has read the warps' candidates
      if (threadIdx.x == 0) {
        const int64_t at = (o * args.k + r) * args.inner + i;
        copyValue(args.values, at, args.in, base + slot * args.inner, args.dtype);
        args.indices[at] = slot;
      }
      previousKey = key;
      previousSlot = slot;
    }
  }
}

template <typename Key> void launchAs(const TopKArgs &args, cudaStream_t stream) {
  const int64_t rows = args.outer * args.inner;
  const auto blocks = unsigned(rows < (1 << 20) ? rows : (1 << 20));
  if (args.dim <= kSortUpTo) {
    int size = 1;
    while (size < args.dim)
      size <<= 1;
    // Half as many threads as elements (each compares a pair), in whole
    // warps: at least one, also for an axis of 1 (size 1, no pair at all).
    const int threads =
        size >= 2 * kThreads ? kThreads : std::max(32, (size / 2 + 31) / 32 * 32);
    const size_t shared = size_t(size) * (sizeof(Key) + sizeof(int32_t));
    topkSortKernel<Key><<<blocks, threads, shared, stream>>>(args, size);
  } else {
    topkSelectKernel<Key><<<blocks, kThreads, 0, stream>>>(args);
  }
}

} // namespace

void launchTopK(const TopKArgs &args, cudaStream_t stream) {
  const bool real = args.dtype == DType::F32 || args.dtype == DType::F16 ||
                    args.dtype == DType::BF16 || args.dtype == DType::F64;
  if (real)
    launchAs<double>(args, stream);
  else
    launchAs<int64_t>(args, stream);
}

} // namespace shardc::rt::cuda::detail
