//===- DistDialect.h - the dist dialect: meshes, shardings, collectives -*- C++ -*-===//
//
// The one header users of `dist` include: the dialect, its attributes and ops,
// and the helpers that read and write the shardings attached to values.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_DIST_DISTDIALECT_H
#define SHARDC_DIALECTS_DIST_DISTDIALECT_H

#include "dialects/Dist/DistAttrs.h"
#include "dialects/Dist/DistOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace shardc::dist {

/// On any op: an array with one #dist.sharding per result.
constexpr llvm::StringLiteral kShardingsAttrName = "dist.shardings";
/// On an op whose results' shardings do not tell how it runs (routed
/// experts: tokens split with or without their experts), between the
/// search and propagation: one #dist.sharding per operand, as the search
/// chose them.
constexpr llvm::StringLiteral kOperandShardingsAttrName = "dist.operand_shardings";
/// On function arguments and results: the value's #dist.sharding.
constexpr llvm::StringLiteral kArgShardingAttrName = "dist.sharding";
/// On a partitioned weight: its global #dist.sharding, from which the
/// artifact writer cuts every rank's block.
constexpr llvm::StringLiteral kWeightShardAttrName = "dist.weight_shard";

/// On a function of a pipelined module: the stage it is (an i64).
constexpr llvm::StringLiteral kStageAttrName = "dist.stage";
/// On a stage program's argument or result (and the exec input or output
/// lowered from it): the dim along which the runtime slices the caller's
/// input into micro-batches, or concatenates their outputs.
constexpr llvm::StringLiteral kMicrobatchDimAttrName = "dist.microbatch_dim";
/// On a function result (and the exec.output it lowers to): the batch mesh
/// axes (dp, ep; an array of names, major first) the result is still split
/// over along `dist.gather_dim`; the runtime gathers the pieces onto the
/// output rank (shardc-defer-result-gathers).
constexpr llvm::StringLiteral kGatherAxesAttrName = "dist.gather_axes";
constexpr llvm::StringLiteral kGatherDimAttrName = "dist.gather_dim";
/// On a stage program's argument (a unit attribute): the micro-batch index
/// (tensor<1xi64>) the runtime gives each run, by which a value the stage
/// holds whole keeps the micro-batch's rows.
constexpr llvm::StringLiteral kMicrobatchIndexAttrName = "dist.microbatch_index";
/// On a stage function: the stage search's estimate for it (a dictionary of
/// seconds, send_seconds, weight_bytes, activation_bytes).
constexpr llvm::StringLiteral kStageEstimateAttrName = "dist.stage_estimate";
/// On a training pipeline's dist.pipeline: per stage, whether its backward
/// computes its forward again (--recompute; set by shardc-pipeline-stages).
constexpr llvm::StringLiteral kRecomputedStagesAttrName = "dist.recomputed_stages";
/// On an op of a training step with dist.pipeline (an i64): the stage it
/// runs on (shardc-pipeline-stages), until the step is cut into programs.
constexpr llvm::StringLiteral kPipelineStageAttrName = "dist.pipeline_stage";
/// On a stage function of a training pipeline: the part of the step it
/// computes ("forward", "backward_input", "backward_weight", "update") and,
/// for an update, its level (an i64; docs/pipeline.md).
constexpr llvm::StringLiteral kPartAttrName = "dist.part";
constexpr llvm::StringLiteral kLevelAttrName = "dist.level";
/// On dist.pipeline: the schedule's estimated step time in seconds.
constexpr llvm::StringLiteral kStepSecondsAttrName = "dist.step_seconds";
/// On a collective of the partitioned program (an i64): it is the bucket of
/// that many collectives of small tensors, fused on their flat
/// concatenation (shardc-bucket-collectives, --bucket-mb).
constexpr llvm::StringLiteral kBucketAttrName = "dist.bucket";

/// The mesh `name` as seen from `from` (the nearest symbol table above it), or
/// null when there is none.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name);

/// Checks that `sharding` fits a value of `valueType` on `mesh`: the mesh
/// exists (pass null when its lookup failed), the value is a ranked tensor with
/// one sharding dim per tensor dim, every axis is an axis of the mesh and is
/// used once, and each dim divides evenly into its shards.
mlir::LogicalResult verifySharding(ShardingAttr sharding, MeshOp mesh, mlir::Type valueType,
                                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The sharding of `value`: from its defining op's `dist.shardings` or, for an
/// argument of a function's entry block, the argument's `dist.sharding`. Null
/// when the value has none.
ShardingAttr getResultSharding(mlir::Value value);

/// Sets `op`'s `dist.shardings` to `shardings`, one per result; an empty list
/// removes the attribute.
void setResultShardings(mlir::Operation *op, llvm::ArrayRef<ShardingAttr> shardings);

} // namespace shardc::dist

#endif
