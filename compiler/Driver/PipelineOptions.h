//===- PipelineOptions.h - --pp and its flags, checked and placed -*- C++ -*-===//
//
// --pp P cuts the model into pipeline stages (docs/pipeline.md). The pp axis
// is never a sharding axis: the module's dist.mesh holds the axes a stage's
// ranks shard over (dp, tp, and the compiler's micro-batch axis mb), and
// dist.pipeline holds the rest (stages, micro-batches, schedule, forced cuts).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_PIPELINEOPTIONS_H
#define SHARDC_COMPILER_DRIVER_PIPELINEOPTIONS_H

#include "passes/Sharding/MeshShape.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::driver {

struct CompileOptions;

struct PipelineSpec {
  int64_t ranks = 1;         ///< P, the pp degree
  int64_t virtualStages = 1; ///< V: stages per pp rank
  int64_t microbatches = 1;  ///< M
  std::string schedule = "gpipe";
  std::string recompute = "selective";
  std::vector<std::string> splits;
};

/// The pipeline the flags ask for, given the device mesh (its pp axis);
/// none without pp. Pipeline flags without --pp are errors.
llvm::Expected<std::optional<PipelineSpec>> parsePipelineOptions(const CompileOptions &options,
                                                                 const sharding::MeshShape &mesh);

/// The mesh the stages shard over: `devices` without pp, with the
/// micro-batch axis in front of dp when there are several micro-batches.
sharding::MeshShape stageMesh(const sharding::MeshShape &devices, const PipelineSpec &spec);

/// Fails unless every batched input of `module` (dim 0 above 1) cuts into
/// `microbatches` pieces of `stages`' dp equal parts each.
llvm::Error checkMicrobatchInputs(mlir::ModuleOp module, int64_t microbatches,
                                  const sharding::MeshShape &stages);

/// Adds dist.pipeline to `module`, once its inputs' batch divides into the
/// micro-batches of every data-parallel rank; the error names the input.
llvm::Error placePipeline(mlir::ModuleOp module, const PipelineSpec &spec,
                          const sharding::MeshShape &stages);

} // namespace shardc::driver

#endif
