//===- Outlining.h - move a group of ops into a graph.composite -*- C++ -*-===//
#ifndef SHARDC_PASSES_GRAPH_OUTLINING_H
#define SHARDC_PASSES_GRAPH_OUTLINING_H

#include "dialects/Graph/GraphOps.h"

namespace shardc::graph {

/// Moves `ops` (one block, any order) into a graph.composite `kind` placed at
/// `root`, which must be among them and is the only op whose results are used
/// outside the group. The composite's inputs are the values the group uses
/// from outside, in first-use order. Returns null, changing nothing, when
/// another op of the group has a user outside it.
CompositeOp outlineComposite(llvm::StringRef kind, llvm::ArrayRef<mlir::Operation *> ops,
                             mlir::Operation *root);

/// Replaces `composite` by copies of its body's ops placed before it, and
/// nested composites by theirs; returns the values its results became.
llvm::SmallVector<mlir::Value> inlineComposite(CompositeOp composite);

} // namespace shardc::graph

#endif
