//===- AttentionTensorCore.cu - fp16/bf16 attention on tensor cores -------===//
//
// The same tiling and online softmax as Attention.cu's kernel, with the two
// products on tensor cores (WMMA, 16x16x16 tiles, fp32 accumulation) for
// half-precision operands. A block takes 64 query rows of one head, a warp
// 16 of them; keys come in tiles of 32. Per key tile, in shared memory:
//   S = Q K^T           by WMMA into fp32 (then scaled, masked)
//   online softmax      two lanes per row; P = exp(S - max) rounded to the
//                       storage type (as FlashAttention does), the row's
//                       output rescaled in place
//   O += P V            by WMMA, O kept in fp32 in shared memory (an
//                       accumulator fragment's layout is opaque, so the
//                       per-row rescaling happens there, not in registers)
// Dims are padded to multiples of 16 with zeros. Unlike Attention.cu's
// kernel, a masked key's value still enters P V with weight 0, so a NaN
// there propagates, as in ONNX's definition.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Attention.h"
#include "runtime/cuda/CudaStatus.h"
#include "runtime/cuda/DeviceSupport.cuh"

#include <mma.h>

namespace shardc::rt::cuda::detail {
namespace {

using namespace device;
namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;
constexpr int kRows = kWarps * 16; // query rows per block, 16 per warp
constexpr int kKeys = 32;          // keys per tile

/// Shared-memory regions, offsets in bytes (each a multiple of 32, as WMMA
/// loads and stores need) and leading dims in elements.
struct TensorCoreLayout {
  int paddedDim, paddedValueDim;
  int queryLd, keyLd, valueLd, scoreLd, weightLd, outputLd;
  int queries, keys, values, scores, weights, outputs, total;
};

__host__ __device__ inline int roundUp(int value, int to) { return (value + to - 1) / to * to; }

template <typename T>
__host__ __device__ inline TensorCoreLayout tensorCoreLayout(int headDim, int valueDim) {
  TensorCoreLayout l;
  l.paddedDim = roundUp(headDim, 16);
  l.paddedValueDim = roundUp(valueDim, 16);
  // +8 half elements / +4 floats: rows start on different banks.
  l.queryLd = l.keyLd = l.paddedDim + 8;
  l.valueLd = l.paddedValueDim + 8;
  l.scoreLd = kKeys + 4;
  l.weightLd = kKeys + 8;
  l.outputLd = l.paddedValueDim + 4;
  const int half = int(sizeof(T));
  l.queries = 0;
  l.keys = roundUp(l.queries + kRows * l.queryLd * half, 32);
  l.values = roundUp(l.keys + kKeys * l.keyLd * half, 32);
  l.scores = roundUp(l.values + kKeys * l.valueLd * half, 32);
  l.weights = roundUp(l.scores + kRows * l.scoreLd * 4, 32);
  l.outputs = roundUp(l.weights + kRows * l.weightLd * half, 32);
  l.total = roundUp(l.outputs + kRows * l.outputLd * 4, 32);
  return l;
}

template <typename T>
__global__ void __launch_bounds__(kWarps * 32) attentionTensorCoreKernel(AttentionArgs args) {
  extern __shared__ __align__(128) unsigned char shared[]; // regions 32-byte aligned
  const TensorCoreLayout l = tensorCoreLayout<T>(int(args.headDim), int(args.valueDim));
  T *queryTile = reinterpret_cast<T *>(shared + l.queries);
  T *keyTile = reinterpret_cast<T *>(shared + l.keys);
  T *valueTile = reinterpret_cast<T *>(shared + l.values);
  float *scoreTile = reinterpret_cast<float *>(shared + l.scores);
  T *weightTile = reinterpret_cast<T *>(shared + l.weights);
  float *outputTile = reinterpret_cast<float *>(shared + l.outputs);
  const T *query = static_cast<const T *>(args.query);
  const T *key = static_cast<const T *>(args.key);
  const T *value = static_cast<const T *>(args.value);
  T *out = static_cast<T *>(args.out);
  const int64_t D = args.headDim, Dv = args.valueDim, Sq = args.seqQ, Sk = args.seqK;
  const int64_t shift = Sk - Sq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // Softmax and output: lane pair (2r, 2r + 1) owns the warp's row r, each
  // lane half of its keys and half of its value dims.
  const int row = lane / 2, side = lane % 2;
  const int warpRow0 = warp * 16;
  const int64_t queryTiles = (Sq + kRows - 1) / kRows;
  const int64_t headsKv = args.headsQ / args.group;
  const T zero = fromFloat<T>(0.0f);

  for (int64_t tile = blockIdx.x; tile < args.batchHeads * queryTiles; tile += gridDim.x) {
    const int64_t bh = tile / queryTiles, i0 = tile % queryTiles * kRows;
    const int64_t kvHead = bh / args.headsQ * headsKv + bh % args.headsQ / args.group;
    const T *q = query + bh * Sq * D;
    const T *k = key + kvHead * Sk * D;
    const T *v = value + kvHead * Sk * Dv;
    const int64_t rowsHere = Sq - i0 < kRows ? Sq - i0 : kRows;

    for (int e = threadIdx.x; e < kRows * l.paddedDim; e += blockDim.x) {
      const int r = e / l.paddedDim, d = e % l.paddedDim;
      queryTile[r * l.queryLd + d] = r < rowsHere && d < D ? q[(i0 + r) * D + d] : zero;
    }
    float *outputRow = outputTile + (warpRow0 + row) * l.outputLd;
    const int halfValues = l.paddedValueDim / 2;
    for (int e = side * halfValues; e < (side + 1) * halfValues; ++e)
      outputRow[e] = 0.0f;
    float runMax = -INFINITY, runSum = 0.0f; // this lane pair's row
    const int64_t i = i0 + warpRow0 + row;
    int64_t maskBase = 0;
    if (args.mask) {
      int64_t at[1];
      mapOffsets(args.maskHeads, bh, at);
      maskBase = at[0];
    }
    int64_t keyEnd = Sk;
    if (args.causal) {
      keyEnd = i0 + rowsHere + shift;
      keyEnd = keyEnd < 0 ? 0 : keyEnd > Sk ? Sk : keyEnd;
    }

    for (int64_t j0 = 0; j0 < keyEnd; j0 += kKeys) {
      const int cols = int(keyEnd - j0 < kKeys ? keyEnd - j0 : kKeys);
      __syncthreads(); // the previous tile is read; the queries are written
      for (int e = threadIdx.x; e < kKeys * l.paddedDim; e += blockDim.x) {
        const int c = e / l.paddedDim, d = e % l.paddedDim;
        keyTile[c * l.keyLd + d] = c < cols && d < D ? k[(j0 + c) * D + d] : zero;
      }
      for (int e = threadIdx.x; e < kKeys * l.paddedValueDim; e += blockDim.x) {
        const int c = e / l.paddedValueDim, d = e % l.paddedValueDim;
        valueTile[c * l.valueLd + d] = c < cols && d < Dv ? v[(j0 + c) * Dv + d] : zero;
      }
      __syncthreads();

      // S = Q K^T for the warp's 16 rows: two 16x16 blocks of keys.
      for (int keyBlock = 0; keyBlock < kKeys / 16; ++keyBlock) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> scores;
        wmma::fill_fragment(scores, 0.0f);
        for (int d0 = 0; d0 < l.paddedDim; d0 += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> b;
          wmma::load_matrix_sync(a, queryTile + warpRow0 * l.queryLd + d0, l.queryLd);
          // K stored [key][d] is K^T [d][key] column-major.
          wmma::load_matrix_sync(b, keyTile + keyBlock * 16 * l.keyLd + d0, l.keyLd);
          wmma::mma_sync(scores, a, b, scores);
        }
        wmma::store_matrix_sync(scoreTile + warpRow0 * l.scoreLd + keyBlock * 16, scores, l.scoreLd,
                                wmma::mem_row_major);
      }
      __syncwarp();

      // Online softmax of row `row`, this lane's 16 keys.
      const float *scoreRow = scoreTile + (warpRow0 + row) * l.scoreLd;
      float s[16];
      float tileMax = -INFINITY;
#pragma unroll
      for (int c = 0; c < 16; ++c) {
        const int col = side * 16 + c;
        const int64_t j = j0 + col;
        bool visible = col < cols && i < Sq && (!args.causal || j <= i + shift);
        float score = scoreRow[col] * args.scale;
        if (visible && args.mask) {
          const int64_t at = maskBase + i * args.maskRowStride + j * args.maskColStride;
          if (args.maskBool)
            visible = static_cast<const uint8_t *>(args.mask)[at] != 0;
          else
            score += toFloat(static_cast<const T *>(args.mask)[at]);
        }
        s[c] = visible ? score : -INFINITY;
        tileMax = fmaxf(tileMax, s[c]);
      }
      tileMax = fmaxf(tileMax, __shfl_xor_sync(0xffffffffu, tileMax, 1));
      const float newMax = fmaxf(runMax, tileMax);
      float correction = 1.0f, partial = 0.0f;
      T *weightRow = weightTile + (warpRow0 + row) * l.weightLd;
#pragma unroll
      for (int c = 0; c < 16; ++c) {
        const float weight = newMax == -INFINITY ? 0.0f : expf(s[c] - newMax);
        partial += weight;
        weightRow[side * 16 + c] = fromFloat<T>(weight);
      }
      if (newMax != -INFINITY) {
        correction = expf(runMax - newMax); // 0 for a row's first visible tile
        runMax = newMax;
      }
      runSum = runSum * correction + partial + __shfl_xor_sync(0xffffffffu, partial, 1);
      if (correction != 1.0f)
        for (int e = side * halfValues; e < (side + 1) * halfValues; ++e)
          outputRow[e] *= correction;
      __syncwarp();

      // O += P V, block by block of 16 value dims.
      for (int e0 = 0; e0 < l.paddedValueDim; e0 += 16) {
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
        float *outputBlock = outputTile + warpRow0 * l.outputLd + e0;
        wmma::load_matrix_sync(acc, outputBlock, l.outputLd, wmma::mem_row_major);
        for (int c0 = 0; c0 < kKeys; c0 += 16) {
          wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
          wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b;
          wmma::load_matrix_sync(a, weightTile + warpRow0 * l.weightLd + c0, l.weightLd);
          wmma::load_matrix_sync(b, valueTile + c0 * l.valueLd + e0, l.valueLd);
          wmma::mma_sync(acc, a, b, acc);
        }
        wmma::store_matrix_sync(outputBlock, acc, l.outputLd, wmma::mem_row_major);
      }
      __syncwarp(); // the output rows are stored before the next rescaling
    }

    __syncwarp();
    if (i < Sq) {
      // A row that saw no key has sum 0: it yields zeros (Attention.h).
      const float inverse = runSum > 0.0f ? 1.0f / runSum : 0.0f;
      T *o = out + (bh * Sq + i) * Dv;
      for (int e = side * halfValues; e < (side + 1) * halfValues && e < Dv; ++e)
        o[e] = fromFloat<T>(outputRow[e] * inverse);
    }
    __syncthreads(); // the next tile rewrites the queries
  }
}

template <typename T> Status launchAs(const AttentionArgs &args, cudaStream_t stream) {
  const TensorCoreLayout layout = tensorCoreLayout<T>(int(args.headDim), int(args.valueDim));
  const size_t bytes = size_t(layout.total);
  auto kernel = attentionTensorCoreKernel<T>;
  if (bytes > 48 * 1024)
    SHARDC_CUDA_TRY(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  const int64_t tiles = args.batchHeads * ((args.seqQ + kRows - 1) / kRows);
  const auto blocks = unsigned(tiles < (1 << 20) ? tiles : (1 << 20));
  kernel<<<blocks, kWarps * 32, bytes, stream>>>(args);
  return Status::success();
}

} // namespace

Status launchAttentionTensorCore(const AttentionArgs &args, cudaStream_t stream) {
  if (args.dtype == DType::BF16)
    return launchAs<__nv_bfloat16>(args, stream);
  return launchAs<__half>(args, stream);
}

} // namespace shardc::rt::cuda::detail
