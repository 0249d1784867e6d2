//===- CausalMask.h - the boolean mask of causal attention -----*- C++ -*-===//
//
// A [queries, keys] i1 constant: query i sees key j when j <= i + offset.
// Built as packed bits directly: a GPT-3 layer's 2048 x 2048 mask as a
// vector of bools, packed by MLIR, cost tens of milliseconds per layer.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_CAUSALMASK_H
#define SHARDC_DIALECTS_GRAPH_CAUSALMASK_H

#include "mlir/IR/BuiltinAttributes.h"

namespace shardc::graph {

mlir::DenseElementsAttr causalMaskAttr(mlir::MLIRContext *context, int64_t queries, int64_t keys,
                                       int64_t offset);

} // namespace shardc::graph

#endif // SHARDC_DIALECTS_GRAPH_CAUSALMASK_H
