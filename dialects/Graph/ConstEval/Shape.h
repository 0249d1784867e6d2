//===- Shape.h - Static shapes and numpy-style broadcasting -----*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_SHAPE_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_SHAPE_H

#include "runtime/core/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::constfold {

/// Every op returns a StatusOr: the value, or why it cannot be folded (the
/// project's one error vocabulary, runtime/core/Status.h), which a folder
/// logs or forwards to a remark as-is.
using rt::Status;
using rt::StatusOr;

/// Dimension sizes, outermost first. Empty = scalar; 0-sized dims are allowed.
using Shape = std::vector<int64_t>;

/// Largest tensor (inputs and results) the evaluator handles: 64M elements,
/// 512 MiB of doubles. Folding is meant for shape arithmetic and small constant
/// subgraphs; past this the folder should leave the op to the runtime rather
/// than make the compiler run out of memory.
inline constexpr int64_t kMaxElements = int64_t(1) << 26;

/// Product of the dims, or -1 when the shape is invalid: a dim is negative, or
/// the product overflows int64 even with 0-sized dims counted as 1 (so that the
/// strides of any valid shape fit in int64).
int64_t shapeNumElements(const Shape &shape);

/// "[2,3]" ("[]" for a scalar), for messages.
std::string formatShape(const Shape &shape);

/// Row-major element strides: the last dim has stride 1.
Shape rowMajorStrides(const Shape &shape);

/// ONNX multidirectional (numpy) broadcasting: shapes are right-aligned, and
/// each pair of dims must be equal or one of them 1 (1 against 0 gives 0).
StatusOr<Shape> broadcastShapes(const Shape &lhs, const Shape &rhs);

/// Strides that read a tensor of shape `from` as if it had the broadcast shape
/// `to`: aligned to to.size() dims, 0 where `from` is missing the dim or has
/// size 1. Precondition: `from` broadcasts to `to`.
Shape broadcastStrides(const Shape &from, const Shape &to);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_SHAPE_H
