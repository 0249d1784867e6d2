//===- UnflattenTokens.h - token-wise regions back on [B, S, H] -*- C++ -*-===//
#ifndef SHARDC_PASSES_GRAPH_UNFLATTENTOKENS_H
#define SHARDC_PASSES_GRAPH_UNFLATTENTOKENS_H

#include "mlir/IR/Operation.h"

namespace shardc::graph {

/// Models that flatten tokens ([B, S, H] viewed as [B*S, H]) around ops that
/// work token by token (OPT's final norm and MLP, with its residual add) and
/// view the result back get those ops on the unflattened value instead, so
/// the batch and sequence dims stay apart for sharding. A region is rewritten
/// only as a whole: every op reached from the flattened value must work per
/// token (norms over the last dim, linear layers, elementwise ops with
/// per-feature or scalar operands) and every way out must view the tokens
/// back as [B, S, H].
void unflattenTokenRegions(mlir::Operation *root);

} // namespace shardc::graph

#endif
