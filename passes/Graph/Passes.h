//===- Passes.h - passes on the graph dialect -------------------*- C++ -*-===//
#ifndef SHARDC_PASSES_GRAPH_PASSES_H
#define SHARDC_PASSES_GRAPH_PASSES_H

#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace shardc::graph {

#define GEN_PASS_DECL
#include "passes/Graph/Passes.h.inc"

/// Adds the raising passes, in dependency order, to `pm` (the
/// `shardc-graph-raise` pipeline), MoE blocks' experts into graph.moe
/// included: every backend has the moe_* kernels.
void buildRaisePipeline(mlir::OpPassManager &pm);

/// Registers the passes and the `shardc-graph-raise` pipeline.
void registerGraphPasses();

} // namespace shardc::graph

#endif
