//===- TrainingPhase.h - which part of a training step an op is -*- C++ -*-===//
//
// shardc-autodiff appends the backward and then the optimizer update after
// the forward (and the loss), and tags each op it leaves with the part it
// belongs to: a discardable `graph.phase` of "forward", "backward" or
// "optimizer". The report splits compute and collectives by it, and the
// memory check tells a weight's gradient (a backward value the optimizer
// reads) from an activation. Ops that later rewrites create (canonicalizer
// folds, sharding's splits) carry no tag; they sit where the op they
// replaced sat, and the block keeps the parts in order, so such an op
// belongs to the part of the nearest tagged op before it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_TRAININGPHASE_H
#define SHARDC_DIALECTS_GRAPH_TRAININGPHASE_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace shardc::graph {

constexpr llvm::StringLiteral kPhaseAttrName = "graph.phase";
/// With a pipeline (shardc-autodiff's tag-owners): each forward op's number
/// (an i64), and on each backward op the number of the forward op whose
/// gradient rule made it; the stage search runs it on that op's stage.
constexpr llvm::StringLiteral kOpIdAttrName = "graph.op_id";
constexpr llvm::StringLiteral kVjpOfAttrName = "graph.vjp_of";

/// In program order.
enum class Phase { Forward, Backward, Optimizer };

inline llvm::StringRef phaseName(Phase phase) {
  switch (phase) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Optimizer:
    return "optimizer";
  }
  return "";
}

inline std::optional<Phase> parsePhase(llvm::StringRef name) {
  for (Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer})
    if (phaseName(phase) == name)
      return phase;
  return std::nullopt;
}

/// Tags every op of `body` that has no phase yet with `phase`; weights and
/// constants belong to no part (the optimizer's states are storage).
inline void tagUntaggedOps(mlir::Block &body, Phase phase) {
  mlir::Builder builder(body.getParentOp()->getContext());
  for (mlir::Operation &op : body.without_terminator())
    if (!mlir::isa<WeightOp, ConstantOp>(op) && !op.hasAttr(kPhaseAttrName))
      op.setAttr(kPhaseAttrName, builder.getStringAttr(phaseName(phase)));
}

/// The part of a training step `op` belongs to: its tag, else that of the
/// nearest tagged op before it in its block; none outside a training step.
inline std::optional<Phase> phaseOf(mlir::Operation *op) {
  for (mlir::Operation *at = op; at; at = at->getPrevNode())
    if (auto name = at->getAttrOfType<mlir::StringAttr>(kPhaseAttrName))
      return parsePhase(name.getValue());
  return std::nullopt;
}

} // namespace shardc::graph

#endif
