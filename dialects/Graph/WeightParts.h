//===- WeightParts.h - the initializers a stacked weight was made of -*- C++ -*-===//
//
// Routed experts stack their experts' weights into one graph.weight with
// part_offsets (passes/Graph/RoutedExperts.cpp); the experts' initializers
// are then one trained parameter. Its `graph.parts` attribute names them in
// stacking order, so what leaves shardc (the manifest's training
// parameters, an exported model) speaks of the model's own initializers:
// part i of the stacked tensor (dim 0) is initializer parts[i].
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_WEIGHTPARTS_H
#define SHARDC_DIALECTS_GRAPH_WEIGHTPARTS_H

#include "llvm/ADT/StringRef.h"

namespace shardc::graph {

/// On graph.weight and exec.weight: an array of initializer names.
inline constexpr llvm::StringLiteral kPartsAttrName = "graph.parts";

} // namespace shardc::graph

#endif
