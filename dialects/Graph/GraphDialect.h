//===- GraphDialect.h - the graph dialect -----------------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/GraphDialect.h.inc"

namespace shardc::graph {

/// On a function's arguments and results: the ONNX input's or output's name,
/// which the artifact's signature keeps.
constexpr llvm::StringLiteral kNameAttrName = "graph.name";

} // namespace shardc::graph

#endif
