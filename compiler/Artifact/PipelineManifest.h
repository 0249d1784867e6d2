//===- PipelineManifest.h - a pipelined module's manifest section -*- C++ -*-===//
//
// The manifest's "pipeline" object (docs/pipeline.md) for a module whose
// stage programs are lowered to exec: micro-batch dims of the caller's
// inputs and outputs, the transfers, every stage program's signature and
// each pp rank's actions; and the caller's signature (whole shapes), which
// no single stage program has.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_ARTIFACT_PIPELINEMANIFEST_H
#define SHARDC_COMPILER_ARTIFACT_PIPELINEMANIFEST_H

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "passes/Sharding/MeshShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace shardc::artifact {

/// One input or output of a program: {"name", "dtype", "shape"}.
llvm::json::Object describeBuffer(llvm::StringRef name, mlir::Value buffer);

/// The program's inputs (or outputs) in index order; the inputs of a
/// program that runs micro-batches itself (a training step) whole.
llvm::json::Array programSignature(mlir::func::FuncOp program, bool inputs);

/// A caller's output, whole (its micro-batch dim times `microbatches`, its
/// runtime-gathered dim times the gather's group on the devices' `mesh`),
/// with the gather ({"dim", "axes"}) the runtime does.
llvm::json::Object callerOutput(exec::OutputOp output, int64_t microbatches,
                                const sharding::MeshShape &mesh);
/// A program's caller outputs (no transfers), whole, in index order.
llvm::json::Array callerOutputs(mlir::func::FuncOp program, const sharding::MeshShape &mesh);

struct PipelineSection {
  llvm::json::Object pipeline;
  llvm::json::Array inputs, outputs; ///< the caller's, whole shapes
};

/// `stages` are the stage programs in stage order; the outputs end on the
/// rank `outputRank`.
mlir::FailureOr<PipelineSection> describePipeline(dist::PipelineOp pipeline,
                                                  llvm::ArrayRef<mlir::func::FuncOp> stages,
                                                  int64_t outputRank,
                                                  const sharding::MeshShape &mesh);

} // namespace shardc::artifact

#endif
