//===- GraphImporter.h - state of one model's import ------------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_GRAPHIMPORTER_H
#define SHARDC_COMPILER_IMPORT_GRAPHIMPORTER_H

#include "compiler/Import/Binding.h"
#include "compiler/Import/ImportOptions.h"
#include "compiler/Import/ModelLoader.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

namespace shardc::import {

/// Holds the value names in scope while the nodes of a graph are imported.
/// Initializers become graph.weight or graph.constant ops on first use.
/// Subgraphs (Loop bodies, If branches) are imported inline, each in a scope
/// of its own that sees the names of the scopes around it.
class GraphImporter {
public:
  GraphImporter(mlir::MLIRContext &context, const LoadedModel &model,
                const ImportOptions &options);

  mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>> run();

  mlir::OpBuilder &builder() { return builder_; }
  const ImportOptions &options() const { return options_; }
  /// The tensor bound to an ONNX name; null when the name is unknown or a sequence.
  mlir::Value lookup(llvm::StringRef name);
  /// What an ONNX name is bound to, innermost scope first; empty when unknown.
  Binding lookupBinding(llvm::StringRef name);
  void define(llvm::StringRef name, mlir::Value value) { define(name, Binding::of(value)); }
  void define(llvm::StringRef name, Binding binding) {
    scopes_.back().names[name] = std::move(binding);
  }

  /// Imports `graph`'s nodes at the insertion point with its inputs bound to
  /// `inputs` and returns what its outputs are bound to. `owner` is the node
  /// holding the subgraph (errors about the binding are reported there).
  mlir::FailureOr<llvm::SmallVector<Binding>> importSubgraph(const onnx::GraphProto &graph,
                                                             llvm::ArrayRef<Binding> inputs,
                                                             mlir::Location owner);

private:
  /// The names one graph (or subgraph) defines while it is imported.
  struct Scope {
    llvm::StringMap<Binding> names;
    llvm::StringMap<const onnx::TensorProto *> initializers;
  };

  mlir::LogicalResult checkOpsets();
  mlir::LogicalResult checkNodesSupported();
  /// Node indices of `graph` in an order where every input, including the
  /// outer-scope names its subgraphs read, is defined before its use.
  /// `definedOutside` says whether a name comes from an enclosing scope.
  mlir::FailureOr<std::vector<int>>
  sortNodes(const onnx::GraphProto &graph,
            const std::function<bool(llvm::StringRef)> &definedOutside);
  mlir::FailureOr<mlir::RankedTensorType> inputType(const onnx::ValueInfoProto &input);
  /// Graph inputs and outputs are named once each (shardrun finds them by name).
  mlir::LogicalResult checkInputOutputNamesUnique();
  /// A graph input that is also an initializer is compiled as its initializer
  /// (onnxruntime's value when the input is not fed); said once, from IR
  /// version 4, where onnxruntime lets a fed value override it.
  void warnAboutInputsWithInitializers();
  /// --input-shape and --constant-input must name graph inputs.
  mlir::LogicalResult checkInputFlagsNameInputs();
  /// Every --dim must name a symbolic dim of an input.
  mlir::LogicalResult checkDimFlagsUsed();
  mlir::LogicalResult checkOutputType(const onnx::ValueInfoProto &output, mlir::Value value);
  mlir::LogicalResult importNode(const onnx::NodeProto &node, int index);
  mlir::FailureOr<mlir::Value> importInitializer(const onnx::TensorProto &tensor);
  mlir::FailureOr<mlir::DenseElementsAttr> constantInputValue(llvm::StringRef name,
                                                              mlir::RankedTensorType type);
  mlir::InFlightDiagnostic fileError();
  mlir::Location nodeLocation(const onnx::NodeProto &node, int index);

  mlir::MLIRContext &context_;
  const LoadedModel &model_;
  const ImportOptions &options_;
  mlir::OpBuilder builder_;
  mlir::Location fileLocation_;
  int64_t opset_ = 0;
  /// The main graph's scope first, then one per subgraph being imported.
  std::vector<Scope> scopes_;
  /// Nodes imported so far, counting each unrolled copy of a loop body.
  int64_t importedNodes_ = 0;
  llvm::StringSet<> usedDims_;
};

} // namespace shardc::import

#endif
