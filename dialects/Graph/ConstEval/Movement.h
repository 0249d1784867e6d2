//===- Movement.h - Data movement ops (no arithmetic) -----------*- C++ -*-===//
//
// These ops only rearrange elements, so they work for every element type.
// Attribute normalization is the caller's job, as the folders already do it to
// verify the op: negative axes resolved, Reshape's 0/-1 resolved, Slice
// starts/ends clamped. The evaluator checks what it is given and fails rather
// than guess.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_MOVEMENT_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_MOVEMENT_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <vector>

namespace shardc::constfold {

/// Same elements, new shape. Every dim must be non-negative (0 and -1 are not
/// interpreted) and the element count must match.
StatusOr<HostTensor> reshape(const HostTensor &operand, const Shape &newShape);

/// result.shape[i] = operand.shape[perm[i]]; perm is a permutation of
/// 0..rank-1.
StatusOr<HostTensor> transpose(const HostTensor &operand, const std::vector<int64_t> &perm);

/// ONNX Slice after the caller's normalization: one start/end/step per dim.
/// The dim takes indices start, start+step, ... while before `end` (exclusive).
/// Step must be non-zero. With step > 0: 0 <= start, end <= dim. With
/// step < 0: -1 <= end (-1 meaning "through index 0"), start <= dim - 1.
/// An empty range (e.g. start >= end for step > 0) gives a 0-sized dim.
StatusOr<HostTensor> slice(const HostTensor &operand, const Shape &starts, const Shape &ends,
                           const Shape &steps);

/// Joins tensors of one type along `axis` (0 <= axis < rank); all other dims
/// must match. At least one input, no null pointers.
StatusOr<HostTensor> concat(const std::vector<const HostTensor *> &inputs, int64_t axis);

/// Cuts `operand` along `axis` into pieces of the given non-negative sizes,
/// which must add up to the dim.
StatusOr<std::vector<HostTensor>> split(const HostTensor &operand, int64_t axis,
                                        const std::vector<int64_t> &sizes);

/// ONNX Expand: the result shape is broadcastShapes(operand.shape, shape), so
/// a 1 in `shape` keeps the operand's dim (unlike numpy.broadcast_to).
StatusOr<HostTensor> expand(const HostTensor &operand, const Shape &shape);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_MOVEMENT_H
