//===- VjpRules.h - the gradient rule of every differentiable graph op -*- C++ -*-===//
//
// A rule maps the cotangents of an op's results to those of its operands
// (a vector-Jacobian product), written with graph ops (GradientBuilder).
// Rules recompute what they need from the op's operands and results instead
// of expecting saved intermediates: the forward ops stay as they are, and the
// sharding search prices the recomputation like any op.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_VJPRULES_H
#define SHARDC_PASSES_AUTODIFF_VJPRULES_H

#include "passes/Autodiff/GradientBuilder.h"

#include "mlir/Support/LogicalResult.h"

#include <optional>

namespace shardc::autodiff {

/// One application of a rule.
struct VjpCall {
  mlir::Operation *op;
  /// One per result; never null (a result without a gradient gets zeros).
  llvm::ArrayRef<mlir::Value> resultGrads;
  /// One per operand: whether the loss depends on it through a trainable weight.
  llvm::ArrayRef<bool> needed;
  GradientBuilder &build;
  /// Filled by the rule: one per operand, null where not needed.
  llvm::SmallVector<mlir::Value> operandGrads;

  mlir::Value dy() const { return resultGrads.front(); }
  mlir::Value operand(unsigned index) const { return op->getOperand(index); }
  mlir::Value result() const { return op->getResult(0); }
  /// The gradient of operand `index`, when it is needed.
  void set(unsigned index, mlir::Value gradient) {
    if (needed[index])
      operandGrads[index] = gradient;
  }
  /// An error at the op (its ONNX node) for an operand it cannot differentiate.
  mlir::LogicalResult refuse(const llvm::Twine &why);
};

/// Builds `call.operandGrads` for `call.op`; an op without a rule, or whose
/// needed operand its rule cannot differentiate, is an error at the op.
mlir::LogicalResult buildVjp(VjpCall &call);

// The families of rules, each in its own file. Each returns std::nullopt
// for an op that is not its own.
std::optional<mlir::LogicalResult> vjpElementwise(VjpCall &call);
std::optional<mlir::LogicalResult> vjpContraction(VjpCall &call);
std::optional<mlir::LogicalResult> vjpNormalization(VjpCall &call);
std::optional<mlir::LogicalResult> vjpAttention(VjpCall &call);
std::optional<mlir::LogicalResult> vjpMovement(VjpCall &call);
std::optional<mlir::LogicalResult> vjpRouting(VjpCall &call);

} // namespace shardc::autodiff

#endif
