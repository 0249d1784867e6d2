//===- TiedWeights.h - one parameter for weights an export duplicated -*- C++ -*-===//
//
// Exporters hold a tied parameter twice: torch's TorchScript exporter folds
// GPT-2's and OPT's LM head (the token embedding, transposed) into an
// initializer of its own. torch trains one parameter, whose gradient is the
// sum of both uses; training the copies apart would let them drift. Weights
// whose bytes are equal, or equal once transposed, are made one: the copy
// becomes a transpose (or a use) of the original, and a warning per tie says
// so.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_TIEDWEIGHTS_H
#define SHARDC_PASSES_AUTODIFF_TIEDWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace shardc::autodiff {

/// The module attribute that lists the ties: an array of
/// {initializer = COPY, of = ORIGINAL, transposed = BOOL}. An ONNX export of
/// the trained model writes the trained original into both initializers.
constexpr llvm::StringLiteral kTiedWeightsAttrName = "graph.tied_weights";

/// Replaces each float weight of `main` (of at least `minElements`
/// elements, not all equal) that duplicates another, directly or
/// transposed, by that one, and lists the ties on `main`'s module.
mlir::LogicalResult tieDuplicateWeights(mlir::func::FuncOp main, int64_t minElements);

} // namespace shardc::autodiff

#endif
