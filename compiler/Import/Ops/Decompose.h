//===- Decompose.h - building blocks of ops imported as several --*- C++ -*-===//
//
// Tile, Pad, OneHot, Einsum and Conv have no graph op of their own: they are
// spelled with slices, concats, reshapes, matmuls and selects at import time.
// These helpers build those pieces, skipping the ones that change nothing.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_IMPORT_OPS_DECOMPOSE_H
#define SHARDC_COMPILER_IMPORT_OPS_DECOMPOSE_H

#include "compiler/Import/NodeContext.h"

namespace shardc::import {

/// `value` with elements [start, end) of `axis` taken every `step` (a
/// negative step walks backwards from start down to end + 1; end -1 means
/// "through element 0", as graph.slice normalizes it).
mlir::FailureOr<mlir::Value> sliceAxis(NodeContext &node, mlir::Value value, int64_t axis,
                                       int64_t start, int64_t end, int64_t step = 1);

/// Several axes at once: elements [start, end) every step of each of `axes`.
mlir::FailureOr<mlir::Value> sliceAxes(NodeContext &node, mlir::Value value,
                                       llvm::ArrayRef<int64_t> axes, llvm::ArrayRef<int64_t> starts,
                                       llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> steps);

/// `values` joined along `axis`; a single value is returned as is.
mlir::FailureOr<mlir::Value> concatAxis(NodeContext &node, llvm::ArrayRef<mlir::Value> values,
                                        int64_t axis);

/// `value` reshaped, or itself when it already has that shape.
mlir::FailureOr<mlir::Value> reshapeTo(NodeContext &node, mlir::Value value,
                                       llvm::ArrayRef<int64_t> shape);

/// `value` transposed, or itself when `perm` is the identity.
mlir::FailureOr<mlir::Value> permute(NodeContext &node, mlir::Value value,
                                     llvm::ArrayRef<int64_t> perm);

/// `value` broadcast to `shape`, or itself when it already has that shape.
mlir::FailureOr<mlir::Value> expandTo(NodeContext &node, mlir::Value value,
                                      llvm::ArrayRef<int64_t> shape);

/// The sum over `axes` (sorted, non-negative), dims dropped; `value` when
/// `axes` is empty.
mlir::FailureOr<mlir::Value> sumOver(NodeContext &node, mlir::Value value,
                                     llvm::ArrayRef<int64_t> axes);

/// How Pad fills the elements it adds.
enum class PadMode { Constant, Reflect, Edge, Wrap };

/// `value` with `before` elements added ahead of `axis` and `after` behind it
/// (a negative amount removes that many instead). Constant mode fills with
/// `fill`, a rank-0 tensor of the element type; the others copy elements of
/// `value` as numpy.pad does.
mlir::FailureOr<mlir::Value> padAxis(NodeContext &node, mlir::Value value, int64_t axis,
                                     int64_t before, int64_t after, PadMode mode, mlir::Value fill);

} // namespace shardc::import

#endif
