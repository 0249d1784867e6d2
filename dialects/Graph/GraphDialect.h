//===- GraphDialect.h - the graph dialect -----------------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/GraphDialect.h.inc"

#endif
