//===- Attention.h - attention and rotary embedding on a GPU ----*- C++ -*-===//
//
// The CUDA forms of runtime/cpu/Attention.h, with its semantics, checks and
// messages: grouped-query heads (query head h reads key/value head
// h / (Hq / Hkv)), bool or additive masks broadcasting to the scores, the
// bottom-right causal rule (key j hidden from query i when j > i + Sk - Sq),
// and a row that sees no key giving zeros. F32/F16/BF16, fp32 math.
//
// attention is FlashAttention-style and never forms the Sq x Sk scores: a
// block takes 16 query rows of one head (4 warps of 4 rows, the scaled
// queries in shared memory) and walks the keys in tiles of 32, each tile of
// keys and values converted to fp32 in shared memory once for all 16 rows.
// Within a tile a lane scores one key against its warp's 4 rows; each row's
// running maximum, sum and output (a slice of the value dims per lane) are
// rescaled as the tiles arrive ("online softmax"), all in registers. Under
// `causal` a block stops at its last row's last visible key. Keys whose
// weight is 0 are skipped, so masked-out values (a KV cache's unused slots)
// never reach the output even if they hold NaN.
//
// With F16/BF16 storage, head sizes up to 128 and at least 32 query rows,
// the two products run on tensor cores instead (AttentionTensorCore.cu: the
// same scheme, 64 query rows per block, the weights rounded to the storage
// type before P V as in FlashAttention; there a masked key's value enters
// with weight 0, so a NaN in it propagates as in ONNX's definition).
//
// Head sizes up to 256 (the shared-memory tiles grow with them); larger ones
// are refused when the program is prepared.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CUDA_ATTENTION_H
#define SHARDC_RUNTIME_CUDA_ATTENTION_H

#include "runtime/cuda/HostSupport.h"

namespace shardc::rt::cuda {

Status attention(const TensorView &query, const TensorView &key, const TensorView &value,
                 const TensorView *mask, double scale, bool causal, const TensorView &out,
                 const LaunchContext &context);
Status rotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
              bool interleaved, const TensorView &out, const LaunchContext &context);

namespace detail {

/// The largest head size (query/key and value) the attention kernels take.
constexpr int64_t kMaxHeadSize = 256;
/// F16/BF16 attention runs on tensor cores up to this head size, for at
/// least this many query rows (a block takes 64).
constexpr int64_t kMaxTensorCoreHeadSize = 128;
constexpr int64_t kTensorCoreRowsFrom = 32;

struct AttentionArgs {
  const void *query = nullptr, *key = nullptr, *value = nullptr;
  void *out = nullptr;
  DType dtype = DType::F32;
  float scale = 1;
  bool causal = false;
  int64_t batchHeads = 0; // batch x query heads
  int64_t headsQ = 0, group = 1, seqQ = 0, seqK = 0, headDim = 0, valueDim = 0;
  // The mask (null: none), bool or of the query's type: element (b, h, i, j)
  // at heads-offset(b * Hq + h) + i * rowStride + j * colStride.
  const void *mask = nullptr;
  bool maskBool = false;
  IndexMap<1> maskHeads;
  int64_t maskRowStride = 0, maskColStride = 0;
};

/// Rotates pairs of the first `rotated` features of each row; the cos/sin
/// row of input row r is the table offset of r (rows broadcast).
struct RotaryArgs {
  void *out = nullptr;
  const void *in = nullptr, *cos = nullptr, *sin = nullptr;
  DType dtype = DType::F32;
  bool interleaved = false, inPlace = false;
  int64_t rows = 0, features = 0, rotated = 0;
  IndexMap<1> table;
};

Status launchAttention(const AttentionArgs &args, cudaStream_t stream); // Attention.cu
Status launchAttentionTensorCore(const AttentionArgs &args,
                                 cudaStream_t stream);          // AttentionTensorCore.cu
void launchRotary(const RotaryArgs &args, cudaStream_t stream); // Rotary.cu

} // namespace detail
} // namespace shardc::rt::cuda

#endif
