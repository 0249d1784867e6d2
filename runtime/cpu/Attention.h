//===- Attention.h - scaled dot-product attention and rotary ----*- C++ -*-===//
//
// attention is computed FlashAttention-style: for a block of query rows, the
// keys are visited in blocks, and a running maximum, running sum and running
// output per row are rescaled as each block arrives ("online softmax"). No
// [Sq, Sk] score matrix is ever allocated; scratch per thread is a few
// blocks (O(block * (D + Dv))), whatever the sequence lengths. Under `causal`,
// key blocks wholly above the diagonal are never touched, so causal attention
// does about half the work.
//
// Numerics: dot products, exps and the running sums in fp32 (F64 in double;
// F16/BF16 are widened per block). The exp is a vectorizable polynomial good
// to fp32 rounding (weights below 2^-126 of the row maximum count as 0). The
// result matches softmax(QK^T)V to fp32 rounding, but is not bitwise equal
// to it (sums are ordered by block). It does not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_ATTENTION_H
#define SHARDC_RUNTIME_CPU_ATTENTION_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"

namespace shardc::rt::cpu {

/// graph.attention:
///   query [B..., Hq, Sq, D], key [B..., Hkv, Sk, D], value [B..., Hkv, Sk, Dv]
///   -> out [B..., Hq, Sq, Dv] = softmax(scale * q k^T + mask) v
/// one float type throughout; Hq a multiple of Hkv, query head h reading
/// key/value head h / (Hq / Hkv) (grouped-query; Hkv == 1 is multi-query).
///  - mask (may be null): bool (true keeps the key) or of the query's type
///    (added to the scaled scores, -inf hides), broadcasting to
///    [B..., Hq, Sq, Sk].
///  - causal hides key j from query i when j > i + Sk - Sq: aligned at the
///    bottom right, so the last query sees every key (a KV cache of Sk - Sq
///    earlier positions); with Sq > Sk the first Sq - Sk queries see none.
///  - A query row that sees no key at all (all masked, or causal as above)
///    gives 0, not the NaN a literal softmax over all -inf would: such rows
///    are padding, and a NaN there would poison later reductions.
/// `out` must not overlap the operands.
Status attention(const TensorView &query, const TensorView &key, const TensorView &value,
                 const TensorView *mask, double scale, bool causal, const TensorView &out);

/// graph.rotary: rotary position embedding of the first R features of the
/// last dim. cos and sin [..., R] (R even, 0 < R <= F) carry one value per
/// feature (full width) and their leading dims broadcast to the input's.
/// Pairs are (i, i + R/2), or (2i, 2i + 1) when `interleaved`; for a pair
/// (a, b): out[a] = x[a] cos[a] - x[b] sin[a], out[b] = x[b] cos[b] + x[a] sin[b].
/// Features past R pass through. Float types; in place (out == input) allowed.
Status rotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
              bool interleaved, const TensorView &out);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_ATTENTION_H
