//===- ConstantConversion.h - MLIR attributes <-> host tensors --*- C++ -*-===//
//
// The folders compute on constfold::HostTensor, which knows nothing of MLIR;
// these functions carry values across that boundary.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_CONSTANTCONVERSION_H
#define SHARDC_DIALECTS_GRAPH_CONSTANTCONVERSION_H

#include "dialects/Graph/ConstEval/HostTensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace shardc::graph {

/// Largest tensor (in elements) that folding materializes as a constant.
/// Large enough for the causal masks of long sequences, small enough that a
/// folded weight-sized product never bloats the IR.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

std::optional<constfold::ScalarType> toScalarType(mlir::Type elementType);
mlir::Type toElementType(constfold::ScalarType type, mlir::MLIRContext *context);

/// nullopt for attributes other than dense elements of a supported type.
std::optional<constfold::HostTensor> toHostTensor(mlir::Attribute attribute);
mlir::DenseElementsAttr toElementsAttr(const constfold::HostTensor &tensor,
                                       mlir::MLIRContext *context);

} // namespace shardc::graph

#endif
