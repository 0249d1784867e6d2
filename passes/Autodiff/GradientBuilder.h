//===- GradientBuilder.h - the graph ops gradients are written with -*- C++ -*-===//
//
// The backward is spelled in the graph dialect's own ops, so that sharding,
// partitioning and lowering take it like any forward op. These helpers build
// those ops at one insertion point and one location (the forward op's, so
// errors and profiles name the ONNX node whose gradient a step computes).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_GRADIENTBUILDER_H
#define SHARDC_PASSES_AUTODIFF_GRADIENTBUILDER_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace shardc::autodiff {

class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &builder, mlir::Location location)
      : builder(builder), location(location) {}

  mlir::OpBuilder &b() { return builder; }
  mlir::Location loc() const { return location; }

  /// A rank-0 constant of `element` type (broadcasts against any tensor).
  mlir::Value scalar(double value, mlir::Type element);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalarLike(mlir::Value like, double value);
  /// Zeros of `type`'s shape and element type.
  mlir::Value zeros(mlir::RankedTensorType type);

  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value a);
  /// a * value, a scalar of a's element type.
  mlir::Value scale(mlir::Value a, double value);

  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> perm);
  /// The last two dims swapped.
  mlir::Value swapLastTwo(mlir::Value value);
  mlir::Value reduceSum(mlir::Value value, llvm::ArrayRef<int64_t> axes, bool keepdims);
  mlir::Value reduceMean(mlir::Value value, llvm::ArrayRef<int64_t> axes, bool keepdims);
  mlir::Value expand(mlir::Value value, llvm::ArrayRef<int64_t> shape);
  mlir::Value matmul(mlir::Value lhs, mlir::Value rhs);
  mlir::Value compare(graph::ComparePredicate predicate, mlir::Value lhs, mlir::Value rhs);
  mlir::Value where(mlir::Value condition, mlir::Value whenTrue, mlir::Value whenFalse);
  /// `value` [d0, ..., dn] as [d0 * ... * d(n-1), dn]: one row per token.
  mlir::Value rows(mlir::Value value);
  /// `value` as one dim.
  mlir::Value flat(mlir::Value value);

  /// The gradient of a value that was broadcast from `shape` to the shape of
  /// `gradient`: summed over the dims the broadcast added or stretched.
  mlir::Value sumToShape(mlir::Value gradient, llvm::ArrayRef<int64_t> shape);

private:
  mlir::OpBuilder &builder;
  mlir::Location location;
};

} // namespace shardc::autodiff

#endif
