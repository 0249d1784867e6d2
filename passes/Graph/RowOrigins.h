//===- RowOrigins.h - which source rows a view's rows are --------*- C++ -*-===//
//
// Raising patterns that must prove two values index the same tokens (or the
// same router entries) compare where their rows come from. A value is seen
// as rows of `rowSize` contiguous elements (a token's hidden vector, or one
// element); reshapes, transposes, slices, expands and gathers by constant
// indices only move rows about, so each row of the view is one row of the
// value they start from, and these functions say which.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_GRAPH_ROWORIGINS_H
#define SHARDC_PASSES_GRAPH_ROWORIGINS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace shardc::graph {

/// Where the rows of a view come from.
struct RowOrigins {
  /// The first value, going back, that no row-moving op produced.
  mlir::Value source;
  /// rows[r]: the row of `source` that row r of the view is.
  llvm::SmallVector<int64_t> rows;
};

/// An op the caller knows to pass each element of one operand through
/// unchanged (result shape = that operand's): returns the operand, else null.
using PassThrough = llvm::function_ref<mlir::Value(mlir::Operation *)>;

/// The rows of `value` (rows of `rowSize` elements, which must divide its
/// element count) back through row-moving ops and the ops `through` passes,
/// to the first value neither explains. Nullopt if a row-moving op on the way
/// cuts rows apart (moves elements inside a row).
std::optional<RowOrigins> traceRows(mlir::Value value, int64_t rowSize,
                                    PassThrough through = nullptr);

/// The elements of an integer constant, in row-major order.
std::optional<llvm::SmallVector<int64_t>> constantInts(mlir::Value value);

} // namespace shardc::graph

#endif
