//===- Movement.h - reshape/copy, transpose, slice, concat, split, expand -*- C++ -*-===//
//
// These kernels only move elements, so they handle every element type (by
// its size) and never round anything. Each is one strided copy over the
// result, parallel over its elements, with contiguous runs done by memcpy.
// `out` must not overlap the inputs unless noted.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_MOVEMENT_H
#define SHARDC_RUNTIME_CPU_MOVEMENT_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/ViewList.h"

#include <vector>

namespace shardc::rt::cpu {

using kernels::ViewList;

/// graph.reshape as a copy: same type and element count, any shapes. A
/// reshape the executor can alias needs no kernel; this is for when it
/// cannot. out == input is a no-op.
Status reshape(const TensorView &input, const TensorView &out);

/// The `copy` kernel, a state's write (graph.assign): same type and shape.
/// out == input is a no-op.
Status copy(const TensorView &input, const TensorView &out);

/// graph.transpose: out.shape[i] = input.shape[perm[i]].
Status transpose(const TensorView &input, const std::vector<int64_t> &perm,
                 const TensorView &out);

/// graph.slice, normalized: per dim, indices start, start + step, ... while
/// before `end` (exclusive); step != 0. Every picked index must be in range
/// (step > 0: 0 <= start, end <= dim; step < 0: start < dim, end >= -1, -1
/// meaning through index 0). out's dims are the counts of picked indices.
Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out);

/// graph.concat along `axis`: one type and rank, equal dims but `axis`.
Status concat(ViewList inputs, int64_t axis, const TensorView &out);

/// graph.split along `axis` into `outs`, whose dims at `axis` are the sizes
/// (adding up to the input's) and equal to the input's elsewhere.
Status split(const TensorView &input, int64_t axis, ViewList outs);

/// graph.expand: input broadcast (numpy rules) to out's shape.
Status expand(const TensorView &input, const TensorView &out);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_MOVEMENT_H
