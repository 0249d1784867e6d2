//===- Passes.h - pipeline stages, their schedule, micro-batches -*- C++ -*-===//
#ifndef SHARDC_PASSES_PIPELINE_PASSES_H
#define SHARDC_PASSES_PIPELINE_PASSES_H

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace shardc::pipeline {

/// Runs `run` on the module's dist.pipeline; nothing without one, an error
/// with more than one.
inline mlir::LogicalResult
forEachPipeline(mlir::ModuleOp module,
                llvm::function_ref<mlir::LogicalResult(dist::PipelineOp)> run) {
  auto pipelines = llvm::to_vector(module.getOps<dist::PipelineOp>());
  if (pipelines.size() > 1)
    return pipelines[1].emitError() << "a module runs one pipeline; found " << pipelines.size();
  return pipelines.empty() ? mlir::success() : run(pipelines.front());
}

#define GEN_PASS_DECL
#include "passes/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Pipeline/Passes.h.inc"

} // namespace shardc::pipeline

#endif
