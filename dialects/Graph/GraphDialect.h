//===- GraphDialect.h - the graph dialect -----------------------*- C++ -*-===//
#ifndef SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H
#define SHARDC_DIALECTS_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Graph/GraphDialect.h.inc"

namespace shardc::graph {

/// On a function's arguments and results: the ONNX input's or output's name,
/// which the artifact's signature keeps.
constexpr llvm::StringLiteral kNameAttrName = "graph.name";
/// On a 2-D graph.weight (and the exec.weight it lowers to; a unit
/// attribute): its type is the stored block's transposed. stored_shape,
/// box_offsets and dist.weight_shard keep the stored orientation; the
/// artifact writer cuts the rank's block as stored and writes it transposed
/// (shardc-pretranspose-weights).
constexpr llvm::StringLiteral kTransposedAttrName = "graph.transposed";

/// On a graph.weight (and the exec.weight it lowers to): storage a training
/// step writes (graph.assign), kept across steps. "param": a trained weight,
/// first the model's value; "state": an optimizer state, first zeros, with
/// no file (docs/training.md).
constexpr llvm::StringLiteral kTrainAttrName = "graph.train";
constexpr llvm::StringLiteral kTrainParam = "param";
constexpr llvm::StringLiteral kTrainState = "state";
/// On the module of a training step: a dictionary of what it was built with
/// (loss, optimizer and its hyperparameters), which the artifact's manifest
/// carries for the runtime and the user.
constexpr llvm::StringLiteral kTrainingAttrName = "graph.training";

} // namespace shardc::graph

#endif
