//===- GraphImporter.h - state of one model's import ------------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_GRAPHIMPORTER_H
#define SHARDC_COMPILER_IMPORT_GRAPHIMPORTER_H

#include "compiler/Import/ImportOptions.h"
#include "compiler/Import/ModelLoader.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace shardc::import {

/// Holds the value names in scope while the nodes of a graph are imported.
/// Initializers become graph.weight or graph.constant ops on first use.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, const LoadedModel &model,
                const ImportOptions &options);

  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> run();

  mlir::OpBuilder &builder() { return builder_; }
  /// The value bound to an ONNX name; null when the name is unknown.
  mlir::Value lookup(llvm::StringRef name);
  void define(llvm::StringRef name, mlir::Value value) { values_[name] = value; }

private:
  mlir::LogicalResult checkOpsets();
  mlir::LogicalResult checkNodesSupported();
  /// Node indices in an order where every input is defined before its use.
  mlir::FailureOr<std::vector<int>> sortNodes();
  mlir::FailureOr<mlir::RankedTensorType> inputType(const onnx::ValueInfoProto &input);
  /// --input-shape and --constant-input must name graph inputs.
  mlir::LogicalResult checkInputFlagsNameInputs();
  /// Every --dim must name a symbolic dim of an input.
  mlir::LogicalResult checkDimFlagsUsed();
  mlir::LogicalResult checkOutputType(const onnx::ValueInfoProto &output, mlir::Value value);
  mlir::LogicalResult importNode(int index);
  mlir::FailureOr<mlir::Value> importInitializer(const onnx::TensorProto &tensor);
  mlir::FailureOr<mlir::DenseElementsAttr> constantInputValue(llvm::StringRef name,
                                                              mlir::RankedTensorType type);
  mlir::InFlightDiagnostic fileError();

  mlir::MLIRContext &context_;
  const LoadedModel &model_;
  const ImportOptions &options_;
  mlir::OpBuilder builder_;
  mlir::Location fileLocation_;
  int64_t opset_ = 0;
  llvm::StringMap<mlir::Value> values_;
  llvm::StringMap<const onnx::TensorProto *> initializers_;
  llvm::StringSet<> usedDims_;
};

} // namespace shardc::import

#endif
