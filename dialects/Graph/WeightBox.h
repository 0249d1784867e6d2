//===- WeightBox.h - a block of a weight, cut at compile time ----*- C++ -*-===//
//
// Passes that split a weight (the parts of a fused projection, the gate and
// up halves of stacked experts) make a graph.weight naming a box of the
// stored tensor: no bytes move until the artifact is written.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_WEIGHTBOX_H
#define SHARDC_DIALECTS_GRAPH_WEIGHTBOX_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace shardc::graph {

/// The box of `weight` covering [begin, end) along `dim` (a box of a box
/// is a box of the stored tensor).
WeightOp weightBox(mlir::OpBuilder &builder, WeightOp weight, int64_t dim, int64_t begin,
                   int64_t end);

} // namespace shardc::graph

#endif
