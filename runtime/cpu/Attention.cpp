//===- Attention.cpp - blocked attention with online softmax ---------------===//
//
// One task is (batch, query head, block of kBlockQ query rows). For each
// block of kBlockK keys the task computes the rows' scores against the block,
// then folds them into the rows' running state:
//   m = running max, l = running sum of exp(s - m), acc = running sum of
//   exp(s - m) v. A new block with max m' > m first rescales l and acc by
//   exp(m - m'); at the end out = acc / l.
// The key/value block (kBlockK x D floats, 16 KiB at D = 64) stays in L1
// while all rows of the query block use it. In fp32 the two block products
// run on register tiles (FloatVec.h): GPT-2-small's twelve attentions, two
// threads, 8.8 ms with the plain loops, whose accumulators went through
// memory on every multiply-add, 5.3 ms with the tiles.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Attention.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/FloatVec.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/VectorMath.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

constexpr int64_t kBlockQ = 32;
constexpr int64_t kBlockK = 64;
/// The fp32 register tile: kRowTile query rows x kTileVecs vectors (16
/// accumulators, half of AVX-512's registers and all of AVX2's).
constexpr int64_t kRowTile = 4;
constexpr int64_t kTileVecs = 4;
constexpr int64_t kTileCols = kTileVecs * simd::kFloatLanes;
constexpr int64_t roundUp(int64_t n, int64_t step) { return (n + step - 1) / step * step; }
static_assert(kBlockQ % kRowTile == 0 && kBlockK % kTileCols == 0,
              "blocks hold whole register tiles");

/// The shapes checkAttention found (Checks.h).
using Dims = AttentionDims;

/// Where the mask element for (batch, head, i, j) lives: base(batch, head) +
/// i * rowStride + j * colStride (strides 0 where the mask broadcasts).
struct MaskLayout {
  const void *data = nullptr;
  bool isBool = false;
  Shape batchStrides; // per batch dim
  int64_t headStride = 0, rowStride = 0, colStride = 0;

  int64_t base(const Dims &dims, int64_t b, int64_t h) const {
    int64_t offset = h * headStride;
    for (size_t d = dims.batchShape.size(); d-- > 0;) {
      offset += (b % dims.batchShape[d]) * batchStrides[d];
      b /= dims.batchShape[d];
    }
    return offset;
  }
};

/// rows x width elements starting at `src` (row stride `width`) as compute
/// type C: the tensor itself when T is C, else widened into `scratch`.
template <typename T, typename C>
const C *rowsAs(const T *src, int64_t count, std::vector<C> &scratch) {
  if constexpr (std::is_same_v<T, C>) {
    (void)count;
    (void)scratch;
    return src;
  } else {
    for (int64_t i = 0; i < count; ++i)
      scratch[size_t(i)] = load(src[i]);
    return scratch.data();
  }
}

/// s[r][c] = sum_d q[r][d] kT[d][c] for r < rows, c < cols; s has row
/// stride kBlockK. With the keys transposed, each term is a broadcast
/// multiply-add over a contiguous row of key columns: vertical SIMD with no
/// horizontal sums, where q . k per key would need one per score. This is
/// the plain form, for the fp64 compute type.
template <typename C>
void blockScores(const C *q, const C *kT, int64_t D, int64_t rows, int64_t cols, C *s) {
  for (int64_t r = 0; r < rows; ++r) {
    C *sr = s + r * kBlockK;
    std::fill(sr, sr + cols, C(0));
    const C *qr = q + r * D;
    for (int64_t d = 0; d < D; ++d) {
      const C qd = qr[d];
      const C *k = kT + d * kBlockK;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c)
        sr[c] += qd * k[c];
    }
  }
}

/// The fp32 register tile both block products run on: for r < kRowTile,
/// c[r][0, Vecs x kFloatLanes) = (c[r] if `accumulate`, else 0) +
/// sum_t a[r][t] b[t], t < depth, with rows of a, b and c `lda`, `ldb` and
/// `ldc` floats apart. The tile stays in registers while t runs, so each
/// multiply-add costs no load or store of its accumulator (the plain loops
/// the vectorizer makes kept it in memory).
template <int64_t Vecs>
void tileProduct(const float *a, int64_t lda, const float *b, int64_t ldb, int64_t depth,
                 float *c, int64_t ldc, bool accumulate) {
  using namespace simd;
  FloatVec tile[kRowTile][Vecs] = {};
  if (accumulate)
#pragma GCC unroll 4
    for (int64_t r = 0; r < kRowTile; ++r)
#pragma GCC unroll 4
      for (int64_t j = 0; j < Vecs; ++j)
        tile[r][j] = loadVec(c + r * ldc + j * kFloatLanes);
  for (int64_t t = 0; t < depth; ++t) {
    FloatVec row[Vecs];
#pragma GCC unroll 4
    for (int64_t j = 0; j < Vecs; ++j)
      row[j] = loadVec(b + t * ldb + j * kFloatLanes);
#pragma GCC unroll 4
    for (int64_t r = 0; r < kRowTile; ++r) {
      const FloatVec weight = splat(a[r * lda + t]);
#pragma GCC unroll 4
      for (int64_t j = 0; j < Vecs; ++j)
        tile[r][j] += weight * row[j];
    }
  }
#pragma GCC unroll 4
  for (int64_t r = 0; r < kRowTile; ++r)
#pragma GCC unroll 4
    for (int64_t j = 0; j < Vecs; ++j)
      storeVec(c + r * ldc + j * kFloatLanes, tile[r][j]);
}

/// The fp32 form (also the compute type of fp16 and bf16), on tiles of
/// kRowTile rows x kTileCols columns of scores. Reads and writes whole
/// tiles: rows up to roundUp(rows, kRowTile) and columns up to
/// roundUp(cols, kTileCols); the caller pads q with zero rows and kT with
/// zero columns, and ignores the padding's scores.
void blockScores(const float *q, const float *kT, int64_t D, int64_t rows, int64_t cols,
                 float *s) {
  for (int64_t r0 = 0; r0 < rows; r0 += kRowTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTileCols)
      tileProduct<kTileVecs>(q + r0 * D, D, kT + c0, kBlockK, D, s + r0 * kBlockK + c0, kBlockK,
                             /*accumulate=*/false);
}

/// acc[r][e] += sum_c p[r][c] v[c][e] for r < rows, c < cols, e < Dv; p has
/// row stride kBlockK. The plain form, for the fp64 compute type.
template <typename C>
void blockValues(const C *p, const C *v, int64_t rows, int64_t cols, int64_t Dv, C *acc) {
  for (int64_t r = 0; r < rows; ++r) {
    C *ar = acc + r * Dv;
    for (int64_t c = 0; c < cols; ++c) {
      const C pc = p[r * kBlockK + c];
      const C *vc = v + c * Dv;
#pragma omp simd
      for (int64_t e = 0; e < Dv; ++e)
        ar[e] += pc * vc[e];
    }
  }
}

/// The fp32 form: register tiles of kRowTile rows over the value columns,
/// whole vectors first, then the columns left over. Rows up to
/// roundUp(rows, kRowTile) (the caller pads p and acc).
void blockValues(const float *p, const float *v, int64_t rows, int64_t cols, int64_t Dv,
                 float *acc) {
  using simd::kFloatLanes;
  for (int64_t r0 = 0; r0 < rows; r0 += kRowTile) {
    const float *pRows = p + r0 * kBlockK;
    float *accRows = acc + r0 * Dv;
    int64_t e0 = 0;
    for (; e0 + kTileCols <= Dv; e0 += kTileCols)
      tileProduct<kTileVecs>(pRows, kBlockK, v + e0, Dv, cols, accRows + e0, Dv, true);
    for (; e0 + kFloatLanes <= Dv; e0 += kFloatLanes)
      tileProduct<1>(pRows, kBlockK, v + e0, Dv, cols, accRows + e0, Dv, true);
    for (int64_t r = 0; r < kRowTile && e0 < Dv; ++r)
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t e = e0; e < Dv; ++e)
          accRows[r * Dv + e] += pRows[r * kBlockK + c] * v[c * Dv + e];
  }
}

template <typename T>
void attentionAs(const Dims &dims, const T *query, const T *key, const T *value,
                 const MaskLayout &mask, double scaleValue, bool causal, T *out) {
  using C = ComputeT<T>;
  const int64_t D = dims.headDim, Dv = dims.valueDim, Sq = dims.seqQ, Sk = dims.seqK;
  const int64_t group = dims.headsQ / dims.headsKv;
  const int64_t queryBlocks = (Sq + kBlockQ - 1) / kBlockQ;
  const int64_t tasks = dims.batch * dims.headsQ * queryBlocks;
  const C scale = C(scaleValue);
  const C negInf = -std::numeric_limits<C>::infinity();
  // Key j is visible from query i when j <= i + shift.
  const int64_t shift = Sk - Sq;

  // Causal rows differ in cost, so tasks are handed out dynamically.
  parallelChunks(tasks, kBlockQ * Sk * (D + Dv), 4, [&](int64_t begin, int64_t end) {
    // Per thread: the running output, max and sum of each query row; the
    // query block pre-multiplied by the scale; the key block transposed to
    // [D, kBlockK]; the block's scores, turned into weights in place.
    std::vector<C> acc(static_cast<size_t>(kBlockQ * Dv));
    std::vector<C> runMax(static_cast<size_t>(kBlockQ));
    std::vector<C> runSum(static_cast<size_t>(kBlockQ));
    std::vector<C> qScaled(static_cast<size_t>(kBlockQ * D));
    std::vector<C> kTransposed(static_cast<size_t>(D * kBlockK));
    std::vector<C> weights(static_cast<size_t>(kBlockQ * kBlockK));
    std::vector<C> vScratch;
    if constexpr (!std::is_same_v<T, C>)
      vScratch.resize(static_cast<size_t>(kBlockK * Dv));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t qb = task % queryBlocks;
      const int64_t h = task / queryBlocks % dims.headsQ;
      const int64_t b = task / queryBlocks / dims.headsQ;
      const int64_t kvh = h / group;
      const int64_t i0 = qb * kBlockQ, rows = std::min(kBlockQ, Sq - i0);
      const T *qRows = query + ((b * dims.headsQ + h) * Sq + i0) * D;
      const T *kHead = key + (b * dims.headsKv + kvh) * Sk * D;
      const T *vHead = value + (b * dims.headsKv + kvh) * Sk * Dv;
      T *oRows = out + ((b * dims.headsQ + h) * Sq + i0) * Dv;
      const int64_t maskBase = mask.data ? mask.base(dims, b, h) : 0;

      // The fp32 block products work on whole tiles of kRowTile rows: the
      // rows past the block's end are zero queries, their results unused.
      const int64_t tileRows = roundUp(rows, kRowTile);
      for (int64_t e = 0; e < rows * D; ++e)
        qScaled[size_t(e)] = C(load(qRows[e])) * scale;
      std::fill(qScaled.begin() + rows * D, qScaled.begin() + tileRows * D, C(0));
      std::fill(acc.begin(), acc.begin() + tileRows * Dv, C(0));
      std::fill(runMax.begin(), runMax.begin() + rows, negInf);
      std::fill(runSum.begin(), runSum.begin() + rows, C(0));

      // Keys past the last row's causal limit are invisible to the block.
      const int64_t keyEnd =
          causal ? std::clamp<int64_t>(i0 + rows + shift, 0, Sk) : Sk;
      for (int64_t j0 = 0; j0 < keyEnd; j0 += kBlockK) {
        const int64_t cols = std::min(kBlockK, keyEnd - j0);
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t d = 0; d < D; ++d)
            kTransposed[size_t(d * kBlockK + c)] = load(kHead[(j0 + c) * D + d]);
        // Zero keys up to the tile's end (a short last block).
        const int64_t tileCols = std::min(roundUp(cols, kTileCols), kBlockK);
        for (int64_t d = 0; d < D && cols < tileCols; ++d)
          std::fill_n(kTransposed.begin() + d * kBlockK + cols, tileCols - cols, C(0));
        const C *v = rowsAs(vHead + j0 * Dv, cols * Dv, vScratch);
        blockScores(qScaled.data(), kTransposed.data(), D, tileRows, cols, weights.data());

        // Online softmax, row by row: scores -> weights, state rescaled.
        for (int64_t r = 0; r < rows; ++r) {
          C *w = weights.data() + r * kBlockK;
          const int64_t i = i0 + r;
          const int64_t visible =
              causal ? std::clamp<int64_t>(i + shift - j0 + 1, 0, cols) : cols;
          if (mask.data && visible > 0) {
            const int64_t at = maskBase + i * mask.rowStride + j0 * mask.colStride;
            if (mask.isBool) {
              const auto *keep = static_cast<const uint8_t *>(mask.data) + at;
              for (int64_t c = 0; c < visible; ++c)
                w[c] = keep[c * mask.colStride] ? w[c] : negInf;
            } else {
              const T *add = static_cast<const T *>(mask.data) + at;
              for (int64_t c = 0; c < visible; ++c)
                w[c] += C(load(add[c * mask.colStride]));
            }
          }
          C blockMax = negInf;
#pragma omp simd reduction(max : blockMax)
          for (int64_t c = 0; c < visible; ++c)
            blockMax = std::max(blockMax, w[c]);
          if (blockMax == negInf) {
            // Nothing visible in this block for this row.
            std::fill(w, w + cols, C(0));
            continue;
          }
          C *accRow = acc.data() + r * Dv;
          const C newMax = std::max(runMax[size_t(r)], blockMax);
          // exp(-inf) = 0 drops the (empty) state of a row's first block.
          const C correction = vmath::exp(runMax[size_t(r)] - newMax);
          if (correction != C(1)) {
            runSum[size_t(r)] *= correction;
            for (int64_t d = 0; d < Dv; ++d)
              accRow[d] *= correction;
          }
          C sum = 0;
#pragma omp simd reduction(+ : sum)
          for (int64_t c = 0; c < visible; ++c) {
            w[c] = vmath::exp(w[c] - newMax);
            sum += w[c];
          }
          std::fill(w + visible, w + cols, C(0));
          runSum[size_t(r)] += sum;
          runMax[size_t(r)] = newMax;
        }
        blockValues(weights.data(), v, tileRows, cols, Dv, acc.data());
      }
      for (int64_t r = 0; r < rows; ++r) {
        // A row that saw no key has sum 0: it yields zeros (see Attention.h).
        const C sum = runSum[size_t(r)];
        const C inverse = sum > C(0) ? C(1) / sum : C(0);
        const C *accRow = acc.data() + r * Dv;
        for (int64_t d = 0; d < Dv; ++d)
          oRows[r * Dv + d] = store<T>(accRow[d] * inverse);
      }
    }
  });
}

} // namespace

Status attention(const TensorView &query, const TensorView &key, const TensorView &value,
                 const TensorView *mask, double scale, bool causal, const TensorView &out) {
  Dims dims;
  SHARDC_KERNEL_TRY(checkAttention(query, key, value, out, nullptr, dims));

  MaskLayout layout;
  if (mask) {
    Shape strides;
    SHARDC_KERNEL_TRY(checkAttentionMask(query, *mask, dims, strides));
    const size_t rank = query.shape.size();
    layout.data = mask->data;
    layout.isBool = mask->dtype == DType::Bool;
    layout.batchStrides.assign(strides.begin(), strides.end() - 3);
    layout.headStride = strides[rank - 3];
    layout.rowStride = strides[rank - 2];
    layout.colStride = strides[rank - 1];
    if (mask->numel() == 0)
      layout.data = nullptr; // only possible when the scores are empty too
  }
  if (out.numel() == 0)
    return Status::success();
  dispatchFloat(query.dtype, [&](auto tag) {
    using T = decltype(tag);
    attentionAs(dims, query.as<const T>(), key.as<const T>(), value.as<const T>(), layout,
                scale, causal, out.as<T>());
  });
  return Status::success();
}

} // namespace shardc::rt::cpu
