//===- Matchers.h - shared helpers of the raising patterns ------*- C++ -*-===//
#ifndef SHARDC_PASSES_GRAPH_MATCHERS_H
#define SHARDC_PASSES_GRAPH_MATCHERS_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/InferredOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace shardc::graph {

/// The value of a constant whose elements are all equal; nullopt otherwise.
std::optional<double> splatValue(mlir::Value value);

/// True when `value` is a splat constant within a relative 1e-4 of `expected`
/// (exported constants like 1/sqrt(2) come with a few digits).
bool isSplat(mlir::Value value, double expected);

/// True for graph.weight and graph.constant: values fixed at compile time.
bool isParameter(mlir::Value value);

/// The values of the weights one run of a pass has read: layers share
/// weights (a mask, a zero table), whose bytes are then read once.
using WeightValues = llvm::DenseMap<mlir::Operation *, std::optional<mlir::DenseElementsAttr>>;

/// The value of `value` when it is fixed at compile time and has at most
/// `maxElements`: a constant, or a plain weight whose bytes can be read
/// (exporters store folded tensors as initializers, often in the external
/// data). A weight that cannot be read is not an error here, just not
/// known: its bytes may be absent while planning.
std::optional<mlir::DenseElementsAttr> compileTimeValue(mlir::Value value, WeightValues &weights,
                                                        int64_t maxElements);

/// Whether `value` is known at compile time to be all zeros.
bool isAllZeros(mlir::Value value, WeightValues &weights, int64_t maxElements);

/// The operand of a two-operand op that is not `known`; null when neither or
/// both are `known`.
mlir::Value otherOperand(mlir::Operation *op, mlir::Value known);

/// If `value` is defined by OpTy, that op; with commutative OpTy the caller
/// checks both operand orders itself.
template <typename OpTy>
OpTy producer(mlir::Value value) {
  return value ? value.getDefiningOp<OpTy>() : OpTy();
}

/// The only user of `value`, if it has exactly one use.
mlir::Operation *soleUser(mlir::Value value);

/// A product of factors: the leaves of a tree of multiplications (and of
/// divisions by constants), with all constant factors multiplied into `scale`.
struct Product {
  llvm::SmallVector<mlir::Value> factors;
  double scale = 1.0;
};

/// The leaves of the tree of additions at `root`, whose inner nodes have one
/// use and the root's type (no broadcasting): the terms of a sum.
void sumTerms(mlir::Value root, llvm::SmallVectorImpl<mlir::Value> &terms);

/// Flattens the multiplication tree at `root`. Inner nodes must have one use
/// (they belong to the tree); `root` itself may have any number.
Product flattenProduct(mlir::Value root);

} // namespace shardc::graph

namespace shardc::graph {

/// Builds OpTy when its operands and attributes are valid for it; a null op
/// (and no diagnostic) otherwise, so a near-miss pattern changes nothing.
template <typename OpTy>
OpTy createIfValid(mlir::OpBuilder &builder, mlir::Location location, mlir::ValueRange operands,
                   llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
  mlir::Operation *op = createInferred(
      builder, location, mlir::OperationName(OpTy::getOperationName(), builder.getContext()),
      operands, attributes);
  return op ? mlir::cast<OpTy>(op) : OpTy();
}

/// Replaces `root` with `replacement` when their types agree; otherwise erases
/// `replacement` (a broadcasting factor made the match wider than the root).
bool replaceIfSameType(mlir::Value root, mlir::Value replacement);

/// Erases the ops under `root` that have no effect and no users (the
/// primitives a raising pass replaced), so later patterns see true use counts.
void eraseDeadOps(mlir::Operation *root);

} // namespace shardc::graph

#endif
