//===- Passes.h - deciding how the program is split -------------*- C++ -*-===//
#ifndef SHARDC_PASSES_SHARDING_PASSES_H
#define SHARDC_PASSES_SHARDING_PASSES_H

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace shardc::sharding {

#define GEN_PASS_DECL
#include "passes/Sharding/Passes.h.inc"

/// Split fused projections, search, propagate (the
/// `shardc-shard` pipeline).
void buildShardPipeline(mlir::OpPassManager &pm, const AutoShardPassOptions &options);

/// Registers the passes and the `shardc-shard` pipeline.
void registerShardingPasses();

} // namespace shardc::sharding

#endif
