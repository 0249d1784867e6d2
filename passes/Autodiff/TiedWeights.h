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

/// Replaces each float weight of `main` (of at least `minElements`
/// elements, not all equal) that duplicates another, directly or
/// transposed, by that one.
mlir::LogicalResult tieDuplicateWeights(mlir::func::FuncOp main, int64_t minElements);

} // namespace shardc::autodiff

#endif
