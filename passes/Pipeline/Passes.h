//===- Passes.h - pipeline stages, their schedule, micro-batches -*- C++ -*-===//
#ifndef SHARDC_PASSES_PIPELINE_PASSES_H
#define SHARDC_PASSES_PIPELINE_PASSES_H

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
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

/// The runOnOperation of a pass over the module's dist.pipeline (between the
/// pass and its generated base): `Derived::run(module, pipeline)` on it,
/// nothing without one.
template <typename Derived, typename GeneratedBase> struct OnThePipeline : GeneratedBase {
  using GeneratedBase::GeneratedBase;

  void runOnOperation() override {
    mlir::ModuleOp module = this->getOperation();
    if (mlir::failed(forEachPipeline(module, [&](dist::PipelineOp pipeline) {
          return static_cast<Derived *>(this)->run(module, pipeline);
        })))
      this->signalPassFailure();
  }
};

#define GEN_PASS_DECL
#include "passes/Pipeline/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Pipeline/Passes.h.inc"

} // namespace shardc::pipeline

#endif
