//===- InferredOps.h - build an op when its operands are valid --*- C++ -*-===//
//
// Rewrites (raising, sharding preparation) build graph ops whose result types
// follow from their operands. Asking the op's own shape inference first turns
// a pattern that does not fit into "nothing built" instead of an invalid op or
// a diagnostic.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_INFERREDOPS_H
#define SHARDC_DIALECTS_GRAPH_INFERREDOPS_H

#include "mlir/IR/Builders.h"

namespace shardc::graph {

/// Builds op `name` with the result types its inferReturnTypes gives for
/// `operands` and `attributes`; null, with nothing built and no diagnostic,
/// when they are not valid for it (or it does not infer its types).
mlir::Operation *createInferred(mlir::OpBuilder &builder, mlir::Location location,
                                mlir::OperationName name, mlir::ValueRange operands,
                                llvm::ArrayRef<mlir::NamedAttribute> attributes);

} // namespace shardc::graph

#endif
