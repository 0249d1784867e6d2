//===- TypeUtils.h - small facts about graph tensor types -------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_TYPEUTILS_H
#define SHARDC_DIALECTS_GRAPH_TYPEUTILS_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace shardc::graph {

/// Bytes one element occupies in memory and in weight files (bool: 1 byte).
int64_t elementByteWidth(mlir::Type elementType);

/// "[2, 3, 4]": shapes as they appear in error messages.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Numpy-style broadcast of two static shapes; nullopt when they don't broadcast.
std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                          llvm::ArrayRef<int64_t> b);

/// True when `from` broadcasts to exactly `to` (one-directional, like Expand's result).
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return mlir::cast<mlir::RankedTensorType>(value.getType());
}

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) { return tensorType(value).getShape(); }

} // namespace shardc::graph

#endif
