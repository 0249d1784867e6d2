//===- Attention.cu - tiled attention with online softmax -----------------===//
//
// See Attention.h for the scheme. Shared memory per block (floats):
//   queries [16][Dp]       the block's rows, scaled, Dp = D rounded up to 4
//   keys    [32][Dp + 4]   one tile; the +4 spreads a lane's row over other
//                          banks than its neighbours' for the 16-byte reads
//   values  [32][32 * C]   one tile; lane l owns value dims [l*C, l*C + C)
//   weights [16][32]       the tile's softmax weights of each row
// C (value dims per lane) is a template parameter: 1, 2, 4 or 8.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Attention.h"
#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/DeviceSupport.cuh"

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;

constexpr int kWarps = 4;
constexpr int kRowsPerWarp = 4;
constexpr int kRows = kWarps * kRowsPerWarp; // query rows per block
constexpr int kKeys = 32;                    // keys per tile: one per lane

/// Offsets (in floats, each a multiple of 4) of the shared-memory regions.
struct Layout {
  int paddedDim, keyStride, valueStride;
  int queries, keys, values, weights, total;
};

__host__ __device__ inline Layout layoutFor(int headDim, int chunks) {
  Layout layout;
  layout.paddedDim = (headDim + 3) / 4 * 4;
  layout.keyStride = layout.paddedDim + 4;
  layout.valueStride = 32 * chunks;
  layout.queries = 0;
  layout.keys = layout.queries + kRows * layout.paddedDim;
  layout.values = layout.keys + kKeys * layout.keyStride;
  layout.weights = layout.values + kKeys * layout.valueStride;
  layout.total = layout.weights + kRows * kKeys;
  return layout;
}

/// N consecutive floats of shared memory, N-float aligned, in one access.
template <int N> __device__ inline void loadFloats(const float *from, float (&to)[N]) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 v = *reinterpret_cast<const float4 *>(from + i);
      to[i] = v.x;
      to[i + 1] = v.y;
      to[i + 2] = v.z;
      to[i + 3] = v.w;
    }
  } else if constexpr (N == 2) {
    const float2 v = *reinterpret_cast<const float2 *>(from);
    to[0] = v.x;
    to[1] = v.y;
  } else {
    to[0] = from[0];
  }
}

__device__ inline float component(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

template <typename T, int kChunks>
__global__ void __launch_bounds__(kWarps * 32) attentionKernel(AttentionArgs args) {
  extern __shared__ float4 sharedVectors[]; // float4: 16-byte aligned
  float *shared = reinterpret_cast<float *>(sharedVectors);
  const Layout layout = layoutFor(int(args.headDim), kChunks);
  float *queryTile = shared + layout.queries;
  float *keyTile = shared + layout.keys;
  float *valueTile = shared + layout.values;
  float *weightTile = shared + layout.weights;
  const T *query = static_cast<const T *>(args.query);
  const T *key = static_cast<const T *>(args.key);
  const T *value = static_cast<const T *>(args.value);
  T *out = static_cast<T *>(args.out);
  const int64_t D = args.headDim, Dv = args.valueDim;
  const int64_t Sq = args.seqQ, Sk = args.seqK;
  const int64_t shift = Sk - Sq; // key j is visible from query i when j <= i + shift
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t queryTiles = (Sq + kRows - 1) / kRows;
  const int64_t headsKv = args.headsQ / args.group;

  for (int64_t tile = blockIdx.x; tile < args.batchHeads * queryTiles; tile += gridDim.x) {
    const int64_t bh = tile / queryTiles, i0 = tile % queryTiles * kRows;
    const int64_t kvHead = bh / args.headsQ * headsKv + bh % args.headsQ / args.group;
    const T *q = query + bh * Sq * D;
    const T *k = key + kvHead * Sk * D;
    const T *v = value + kvHead * Sk * Dv;
    const int64_t rowsHere = Sq - i0 < kRows ? Sq - i0 : kRows;

    for (int e = threadIdx.x; e < kRows * layout.paddedDim; e += blockDim.x) {
      const int r = e / layout.paddedDim, d = e % layout.paddedDim;
      queryTile[e] = r < rowsHere && d < D ? toFloat(q[(i0 + r) * D + d]) * args.scale : 0.0f;
    }
    float runMax[kRowsPerWarp], runSum[kRowsPerWarp], acc[kRowsPerWarp][kChunks];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      runMax[r] = -INFINITY;
      runSum[r] = 0.0f; // this lane's keys only; summed over the warp at the end
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
        acc[r][c] = 0.0f;
    }
    int64_t maskBase = 0;
    if (args.mask) {
      int64_t at[1];
      mapOffsets(args.maskHeads, bh, at);
      maskBase = at[0];
    }
    // Keys past the block's last row's causal limit are visible to no row.
    int64_t keyEnd = Sk;
    if (args.causal) {
      keyEnd = i0 + rowsHere + shift;
      keyEnd = keyEnd < 0 ? 0 : keyEnd > Sk ? Sk : keyEnd;
    }

    for (int64_t j0 = 0; j0 < keyEnd; j0 += kKeys) {
      const int cols = int(keyEnd - j0 < kKeys ? keyEnd - j0 : kKeys);
      __syncthreads(); // the previous tile is read; the queries are written
      for (int e = threadIdx.x; e < kKeys * layout.paddedDim; e += blockDim.x) {
        const int c = e / layout.paddedDim, d = e % layout.paddedDim;
        keyTile[c * layout.keyStride + d] = c < cols && d < D ? toFloat(k[(j0 + c) * D + d]) : 0.0f;
      }
      for (int e = threadIdx.x; e < kKeys * layout.valueStride; e += blockDim.x) {
        const int c = e / layout.valueStride, d = e % layout.valueStride;
        valueTile[e] = c < cols && d < Dv ? toFloat(v[(j0 + c) * Dv + d]) : 0.0f;
      }
      __syncthreads();

      // Lane = key: its scores against the warp's rows.
      float score[kRowsPerWarp];
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r)
        score[r] = 0.0f;
      const float *keyRow = keyTile + lane * layout.keyStride;
      const float *queryRows = queryTile + warp * kRowsPerWarp * layout.paddedDim;
      for (int d = 0; d < layout.paddedDim; d += 4) {
        const float4 kd = *reinterpret_cast<const float4 *>(keyRow + d);
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
          const float4 qd = *reinterpret_cast<const float4 *>(queryRows + r * layout.paddedDim + d);
          score[r] += qd.x * kd.x + qd.y * kd.y + qd.z * kd.z + qd.w * kd.w;
        }
      }

      // Online softmax: mask, then fold the tile into each row's state.
      const int64_t j = j0 + lane;
      float *weights = weightTile + warp * kRowsPerWarp * kKeys;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t i = i0 + warp * kRowsPerWarp + r;
        bool visible = lane < cols && i < Sq && (!args.causal || j <= i + shift);
        float s = score[r];
        if (visible && args.mask) {
          const int64_t at = maskBase + i * args.maskRowStride + j * args.maskColStride;
          if (args.maskBool)
            visible = static_cast<const uint8_t *>(args.mask)[at] != 0;
          else
            s += toFloat(static_cast<const T *>(args.mask)[at]);
        }
        s = visible ? s : -INFINITY;
        const float newMax = fmaxf(runMax[r], warpReduce(s, MaxOp()));
        float weight = 0.0f;
        if (newMax != -INFINITY) { // the same for the whole warp
          // exp(-inf) = 0 drops the empty state of a row's first visible tile.
          const float correction = expf(runMax[r] - newMax);
          weight = expf(s - newMax);
          runSum[r] = runSum[r] * correction + weight;
#pragma unroll
          for (int c = 0; c < kChunks; ++c)
            acc[r][c] *= correction;
          runMax[r] = newMax;
        }
        weights[r * kKeys + lane] = weight;
      }
      __syncwarp();

      // acc[r] += sum over keys of weight[r][key] * value[key], this lane's
      // value dims; keys past `cols` have weight 0 and zero values.
      const float *valueLane = valueTile + lane * kChunks;
      for (int c0 = 0; c0 < cols; c0 += 4) {
        float4 w[kRowsPerWarp];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r)
          w[r] = *reinterpret_cast<const float4 *>(weights + r * kKeys + c0);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          float values[kChunks];
          loadFloats<kChunks>(valueLane + (c0 + c) * layout.valueStride, values);
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) {
            const float weight = component(w[r], c);
            if (weight == 0.0f) // masked keys' values (NaN in a cache's unused slots) stay out
              continue;
#pragma unroll
            for (int e = 0; e < kChunks; ++e)
              acc[r][e] += weight * values[e];
          }
        }
      }
      __syncwarp(); // the weights are read before the next tile writes them
    }

#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int64_t i = i0 + warp * kRowsPerWarp + r;
      const float sum = warpReduce(runSum[r], SumOp());
      if (i >= Sq)
        continue;
      // A row that saw no key has sum 0: it yields zeros (Attention.h).
      const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
      T *o = out + (bh * Sq + i) * Dv;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const int64_t e = int64_t(lane) * kChunks + c;
        if (e < Dv)
          o[e] = fromFloat<T>(acc[r][c] * inverse);
      }
    }
    __syncthreads(); // the next tile rewrites the queries
  }
}

template <typename T, int kChunks> Status launchAs(const AttentionArgs &args, cudaStream_t stream) {
  const Layout layout = layoutFor(int(args.headDim), kChunks);
  const size_t bytes = size_t(layout.total) * sizeof(float);
  auto kernel = attentionKernel<T, kChunks>;
  // Up to 84 KiB at head size 256: past the default 48 KiB a kernel must ask.
  if (bytes > 48 * 1024)
    SHARDC_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const int64_t tiles = args.batchHeads * ((args.seqQ + kRows - 1) / kRows);
  const auto blocks = unsigned(tiles < (1 << 20) ? tiles : (1 << 20));
  kernel<<<blocks, kWarps * 32, bytes, stream>>>(args);
  return Status::success();
}

template <typename T> Status launchTyped(const AttentionArgs &args, cudaStream_t stream) {
  if (args.valueDim <= 32)
    return launchAs<T, 1>(args, stream);
  if (args.valueDim <= 64)
    return launchAs<T, 2>(args, stream);
  if (args.valueDim <= 128)
    return launchAs<T, 4>(args, stream);
  return launchAs<T, 8>(args, stream);
}

} // namespace

Status launchAttention(const AttentionArgs &args, cudaStream_t stream) {
  // Tensor cores for half-precision storage, where their 64-row blocks are
  // filled and the tiles fit; this kernel for the rest.
  if ((args.dtype == DType::F16 || args.dtype == DType::BF16) &&
      args.headDim <= kMaxTensorCoreHeadSize && args.valueDim <= kMaxTensorCoreHeadSize &&
      args.seqQ >= kTensorCoreRowsFrom)
    return launchAttentionTensorCore(args, stream);
  switch (args.dtype) {
  case DType::F16:
    return launchTyped<__half>(args, stream);
  case DType::BF16:
    return launchTyped<__nv_bfloat16>(args, stream);
  default:
    return launchTyped<float>(args, stream);
  }
}

} // namespace shardc::rt::cuda::detail
