//===- NodeLocation.h - ONNX nodes as MLIR locations ------------*- C++ -*-===//
//
// The importer gives every op the location of its ONNX node,
//   fused<"OpType">["node name"("model.onnx":0:0)], or with the torch module
//   the node came from, fused<"OpType">["node name"("model.layers.0.mlp"(
//   "model.onnx":0:0))],
// so diagnostics, profiles and reports can name the node and its module.
// This is the one place that builds and reads that encoding.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_NODELOCATION_H
#define SHARDC_DIALECTS_GRAPH_NODELOCATION_H

#include "mlir/IR/Location.h"

#include <optional>
#include <string>

namespace shardc::graph {

mlir::Location nodeLocation(mlir::MLIRContext &context, llvm::StringRef file,
                            llvm::StringRef nodeName, llvm::StringRef opType,
                            llvm::StringRef modulePath = {});

struct OnnxNode {
  llvm::StringRef file;   ///< empty when unknown
  llvm::StringRef name;
  llvm::StringRef opType; ///< empty for tensors (initializers, constant inputs)
  llvm::StringRef module; ///< dotted torch module path; empty when unknown
};

/// The node (or named tensor) a location stands for, if it is one.
std::optional<OnnxNode> onnxNodeOf(mlir::Location location);

/// The names of every ONNX node in `location` (a raised op fuses several),
/// joined with ", "; empty when there is none.
std::string onnxNodeNames(mlir::Location location);

/// The innermost module holding every ONNX node in `location` (their longest
/// common dotted prefix); empty when none is known.
std::string onnxModuleOf(mlir::Location location);

} // namespace shardc::graph

#endif
