//===- NodeContext.h - what an op importer sees of its ONNX node -*- C++ -*-===//
//
// Each ONNX op type has an import function that reads its node through a
// NodeContext: inputs as MLIR values (or as compile-time constants, for shape
// operands), attributes with their defaults, and builders that check shapes
// and fold as they go. Errors are reported at the node's location.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_IMPORT_NODECONTEXT_H
#define SHARDC_COMPILER_IMPORT_NODECONTEXT_H

#include "compiler/Import/Binding.h"
#include "compiler/Import/ImportOptions.h"

#include "dialects/Graph/ConstEval/HostTensor.h"
#include "dialects/Graph/GraphOps.h"

#include "onnx/onnx_pb.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

#include <optional>

namespace shardc::import {

class GraphImporter;

/// The failed FailureOr<Value>, for chains of `ok ? build(...) : noValue()`.
inline mlir::FailureOr<mlir::Value> noValue() { return mlir::failure(); }

class NodeContext {
public:
  NodeContext(GraphImporter &importer, const onnx::NodeProto &node, mlir::Location location,
              int64_t opset);

  const onnx::NodeProto &node() const { return node_; }
  mlir::Location location() const { return location_; }
  int64_t opset() const { return opset_; }
  mlir::MLIRContext *context() const { return location_.getContext(); }
  mlir::OpBuilder &builder();
  /// What the user told the importer (--dim values, ...).
  const ImportOptions &options() const;

  /// Reports an error at the node.
  mlir::InFlightDiagnostic error() const { return mlir::emitError(location_); }

  // Inputs ------------------------------------------------------------------
  /// True when input `index` exists and is not the empty name (ONNX's "absent").
  bool hasInput(unsigned index) const;
  unsigned numInputs() const { return node_.input_size(); }
  /// Input `index`; it must exist (checked by requireInputs).
  mlir::Value input(unsigned index) const;
  mlir::RankedTensorType inputType(unsigned index) const;
  /// Errors unless inputs [0, count) are all present.
  mlir::LogicalResult requireInputs(unsigned count) const;
  /// The value of input `index`, which must fold to a constant (`role` names it
  /// in the error, e.g. "shape").
  mlir::FailureOr<constfold::HostTensor> constantInput(unsigned index, llvm::StringRef role) const;
  mlir::FailureOr<llvm::SmallVector<int64_t>> intsInput(unsigned index, llvm::StringRef role) const;
  /// The single integer of input `index` (TopK's k, Trilu's k).
  mlir::FailureOr<int64_t> integerInput(unsigned index, llvm::StringRef role) const;
  /// The value of `value`, which must fold to a constant; `role` and `name`
  /// (its ONNX name) say what it is in the error.
  mlir::FailureOr<constfold::HostTensor> constantValue(mlir::Value value, llvm::StringRef role,
                                                       llvm::StringRef name) const;
  /// What input `index` is bound to: a tensor or a sequence (Binding.h).
  Binding binding(unsigned index) const;
  /// The sequence bound to input `index`; an error when it is a tensor.
  mlir::FailureOr<TensorSequence> sequenceInput(unsigned index) const;

  // Attributes --------------------------------------------------------------
  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name, int64_t fallback) const;
  mlir::FailureOr<double> floatAttr(llvm::StringRef name, double fallback) const;
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name, llvm::StringRef fallback) const;
  /// nullopt when absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>> intsAttr(llvm::StringRef name) const;
  /// An int attribute ONNX defines as a flag: errors unless it is 0 or 1.
  mlir::FailureOr<bool> flagAttr(llvm::StringRef name, bool fallback) const;
  /// Errors when an attribute the importer cannot honour is set to a non-default value.
  mlir::LogicalResult rejectAttr(llvm::StringRef name, int64_t supportedValue) const;

  // Axes --------------------------------------------------------------------
  /// Resolves a possibly negative axis against `rank`.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis") const;
  /// Resolves, sorts and checks a list of axes for uniqueness.
  mlir::FailureOr<llvm::SmallVector<int64_t>> normalizeAxes(llvm::ArrayRef<int64_t> axes,
                                                            int64_t rank) const;

  // Outputs -----------------------------------------------------------------
  unsigned numOutputs() const { return node_.output_size(); }
  bool hasOutput(unsigned index) const;
  void setOutput(unsigned index, mlir::Value value);
  void setBinding(unsigned index, Binding binding);
  /// Binds output `index` to `result` when building it succeeded.
  mlir::LogicalResult define(mlir::FailureOr<mlir::Value> result, unsigned index = 0);
  /// Errors when the node asks for an output the importer does not produce.
  mlir::LogicalResult rejectOutputsFrom(unsigned index) const;

  // Subgraphs ---------------------------------------------------------------
  /// The graph attribute `name`; an error when it is missing or not a graph.
  mlir::FailureOr<const onnx::GraphProto *> graphAttr(llvm::StringRef name) const;
  /// Imports `graph` inline at the insertion point, its inputs bound to
  /// `inputs`, outer names visible; returns its outputs.
  mlir::FailureOr<llvm::SmallVector<Binding>> importSubgraph(const onnx::GraphProto &graph,
                                                             llvm::ArrayRef<Binding> inputs);

  // Building ----------------------------------------------------------------
  /// Builds OpTy with inferred result types, verifies it and folds it.
  template <typename OpTy>
  mlir::FailureOr<mlir::SmallVector<mlir::Value>>
  createMulti(mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::OperationState state(location_, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    llvm::SmallVector<mlir::Type> types;
    if (mlir::failed(OpTy::inferReturnTypes(context(), location_, state.operands,
                                            state.attributes.getDictionary(context()),
                                            mlir::OpaqueProperties(nullptr), mlir::RegionRange(),
                                            types)))
      return mlir::failure();
    state.addTypes(types);
    return finish(state);
  }
  template <typename OpTy>
  mlir::FailureOr<mlir::Value> create(mlir::ValueRange operands,
                                      llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    auto results = createMulti<OpTy>(operands, attributes);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }
  /// Builds OpTy whose result type is given (reshape, expand, cast).
  template <typename OpTy>
  mlir::FailureOr<mlir::Value> createTyped(mlir::Type type, mlir::ValueRange operands,
                                           llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::OperationState state(location_, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    state.addTypes(type);
    auto results = finish(state);
    if (mlir::failed(results))
      return mlir::failure();
    return results->front();
  }
  mlir::Value constant(mlir::DenseElementsAttr value);
  mlir::FailureOr<mlir::Value> constant(const constfold::HostTensor &value);
  /// A scalar constant of `elementType` broadcastable against any tensor;
  /// an error when `value` has no exact value of that type (an integer
  /// tensor scaled by 0.5, a float beyond int64).
  mlir::FailureOr<mlir::Value> scalar(mlir::Type elementType, double value);

  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute value) {
    return builder().getNamedAttr(name, value);
  }
  mlir::NamedAttribute i64Attr(llvm::StringRef name, int64_t value) {
    return attr(name, builder().getI64IntegerAttr(value));
  }
  mlir::NamedAttribute boolAttr(llvm::StringRef name, bool value) {
    return attr(name, builder().getBoolAttr(value));
  }
  mlir::NamedAttribute f64Attr(llvm::StringRef name, double value) {
    return attr(name, builder().getF64FloatAttr(value));
  }
  mlir::NamedAttribute arrayAttr(llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
    return attr(name, builder().getDenseI64ArrayAttr(values));
  }

  // Common composites used by several importers.
  mlir::FailureOr<mlir::Value> reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::FailureOr<mlir::Value> transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);

private:
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> finish(mlir::OperationState &state);

  GraphImporter &importer_;
  const onnx::NodeProto &node_;
  mlir::Location location_;
  int64_t opset_;
};

} // namespace shardc::import

#endif
