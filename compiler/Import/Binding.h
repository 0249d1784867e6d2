//===- Binding.h - what an ONNX name stands for while importing -*- C++ -*-===//
//
// Most ONNX names are tensors and become MLIR values. Sequences (the
// Sequence* ops, SplitToSequence, loop-carried lists) never reach the graph
// dialect: shardc's programs are static, so a sequence is a list of tensor
// values the importer knows while it builds the graph, and the ops that read
// it pick or join its items at compile time.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_IMPORT_BINDING_H
#define SHARDC_COMPILER_IMPORT_BINDING_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace shardc::import {

/// An ONNX tensor sequence: its element type (known even when it is empty)
/// and its items in order.
struct TensorSequence {
  mlir::Type elementType;
  llvm::SmallVector<mlir::Value> items;
};

/// A tensor value or a sequence; empty when the name is unbound.
struct Binding {
  mlir::Value tensor;
  std::optional<TensorSequence> sequence;

  static Binding of(mlir::Value value) { return Binding{value, std::nullopt}; }
  static Binding of(TensorSequence list) { return Binding{mlir::Value(), std::move(list)}; }
  bool isSequence() const { return sequence.has_value(); }
  explicit operator bool() const { return tensor || sequence; }
};

} // namespace shardc::import

#endif
