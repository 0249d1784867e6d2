//===- Indexing.h - gathers, scatters, trilu --------------------*- C++ -*-===//
//
// Index tensors are I32 or I64; negative indices count from the end of the
// axis. Every index is checked before anything is written, and one outside
// [-dim, dim) is an error Status naming it (never an out-of-bounds access).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_INDEXING_H
#define SHARDC_RUNTIME_CPU_INDEXING_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/Ops.h"

namespace shardc::rt::cpu {

// The kernel contract's, shared with the CUDA backend.
using kernels::ScatterReduction;
using kernels::scatterReductionFromName;
using kernels::scatterReductionName;

/// graph.gather: out = data[:axis] + indices.shape + data[axis+1:], taking
/// whole slices of data along `axis` (an embedding lookup at axis 0). Any
/// element type. `out` must not overlap data.
Status gather(const TensorView &data, const TensorView &indices, int64_t axis,
              const TensorView &out);

/// graph.scatter_elements: out = data, then for every position p of indices
/// the element at p with p[axis] replaced by indices[p] becomes updates[p]
/// (None) or is combined with it (Add/Mul in the element type, wrapping for
/// integers; Max/Min propagating NaN). indices and updates share one shape of
/// data's rank, within data's dims except at `axis`. Updates to one target are
/// applied in row-major order of p, so with None the last one wins
/// (deterministically, also with several threads: positions that differ
/// outside `axis` never share a target, and the threads split only those).
/// Bool data supports only None. out may be data itself (in place).
Status scatterElements(const TensorView &data, const TensorView &indices,
                       const TensorView &updates, int64_t axis,
                       ScatterReduction reduction, const TensorView &out);

/// graph.gather_elements: out[p] = data[p with p[axis] replaced by
/// indices[p]], out of the indices' shape (data's rank, no larger than data
/// outside `axis`). Any element type. `out` must not overlap data.
Status gatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                      const TensorView &out);

/// graph.gather_nd: indices [B..., N..., k] with B the `batchDims` leading
/// dims of data; each k-tuple indexes data's dims batchDims..batchDims+k-1
/// within its batch, and out [B..., N..., data[batchDims+k:]...] holds the
/// slices they name. Any element type. `out` must not overlap data.
Status gatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                const TensorView &out);

/// graph.scatter_nd: out = data, then for every k-tuple t of indices
/// [N..., k] (in row-major order) the slice data[t] becomes updates[N...]
/// (None) or is combined with it elementwise (as scatter_elements). With None
/// a repeated tuple takes the last slice (deterministically, also with
/// several threads: the threads split the slices' elements, never the
/// tuples). Bool data supports only None. out may be data itself (in place).
Status scatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                 ScatterReduction reduction, const TensorView &out);

/// graph.trilu on the last two dims (rank >= 2, leading dims are batches):
/// keeps element (i, j) when j - i >= k (upper) or j - i <= k (lower) and
/// zeroes the rest. Any element type and any k. In place allowed.
Status trilu(const TensorView &input, int64_t k, bool upper, const TensorView &out);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_INDEXING_H
