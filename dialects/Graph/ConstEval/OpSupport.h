//===- OpSupport.h - Checks and helpers shared by the ops (internal) -*- C++ -*-===//
//
// Internal to the evaluator; folders include the family headers instead.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_OPSUPPORT_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_OPSUPPORT_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <optional>
#include <string>

namespace shardc::constfold::detail {

/// Fails on a malformed operand; `role` names it in the message ("lhs", "data").
Status checkOperand(const HostTensor &tensor, const char *role);

/// Fails unless 0 <= axis < rank. Axes are normalized by the caller (ONNX
/// negative axes resolved), so a negative one here is a caller error.
Status checkAxis(int64_t axis, int64_t rank);

/// A zero-filled result of `type` and `shape`, or an error when the shape is
/// invalid or larger than kMaxElements (checked before allocating, so an
/// absurd shape cannot make the compiler throw bad_alloc).
StatusOr<HostTensor> allocate(ScalarType type, const Shape &shape);

/// Calls fn(sourceStorage, destinationStorage) with the storage vectors that
/// `type` uses. Data-movement ops are written once as a generic lambda.
template <typename Fn>
void withStorage(const HostTensor &source, HostTensor &destination, Fn &&fn) {
  if (isFloat(source.type))
    fn(source.floats, destination.floats);
  else
    fn(source.ints, destination.ints);
}

/// destination[i] = source[base + sum_d index_d(i) * strides[d]] over the
/// destination's shape: the single copy loop behind transpose, slice, expand.
void stridedCopy(const HostTensor &source, HostTensor &destination,
                 int64_t base, const Shape &strides);

/// Normalizes wide intermediate results to the element type.
void roundAll(std::vector<double> &values, ScalarType type);
void wrapAll(std::vector<int64_t> &values, ScalarType type);

/// The value of integer `type` that truncating `value` toward zero gives, or
/// nullopt when `value` is NaN or infinite or the truncation does not fit the
/// type (ONNX leaves those conversions undefined).
std::optional<int64_t> truncateToInt(ScalarType type, double value);

/// Same-shaped element type check with a message naming the op.
Status checkSameType(const HostTensor &a, const HostTensor &b, const char *opName);

} // namespace shardc::constfold::detail

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_OPSUPPORT_H
