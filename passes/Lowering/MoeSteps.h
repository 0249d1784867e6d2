//===- MoeSteps.h - graph.moe as three kernel steps --------------*- C++ -*-===//
//
// graph.moe runs as moe_dispatch, moe_experts and moe_combine
// (docs/experts.md): the buffers between them are sized here for the worst
// case the runtime checks, so no run can need more than the plan gave.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_LOWERING_MOESTEPS_H
#define SHARDC_PASSES_LOWERING_MOESTEPS_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace shardc::lowering {

/// The rows a member's experts can receive in one step: every entry of the
/// tokens they may see for them, or the capacity's bound.
int64_t moeRowBound(graph::MoeOp moe);

/// Emits the three steps of `moe` (its operands already lowered to
/// `inputs`) writing `result`, the buffer of its result.
void emitMoeSteps(mlir::OpBuilder &builder, graph::MoeOp moe, mlir::ValueRange inputs,
                  mlir::Value result);

} // namespace shardc::lowering

#endif
