//===- ShardingConversion.h - #dist.sharding <-> ValueSharding --*- C++ -*-===//
#ifndef SHARDC_PASSES_SHARDING_SHARDINGCONVERSION_H
#define SHARDC_PASSES_SHARDING_SHARDINGCONVERSION_H

#include "passes/Sharding/CostModel.h"
#include "passes/Sharding/ValueSharding.h"

#include "dialects/Dist/DistDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace shardc::sharding {

/// The module's mesh, or null when it has none (one device). More than one
/// mesh is an error reported at the module.
mlir::FailureOr<dist::MeshOp> findMesh(mlir::ModuleOp module);
MeshShape meshShapeOf(dist::MeshOp mesh);

/// Runs `run` on every function of a module that has a mesh; a module
/// without one is for one device, and there is nothing to do.
mlir::LogicalResult forEachFunctionOnMesh(
    mlir::ModuleOp module,
    llvm::function_ref<mlir::LogicalResult(mlir::func::FuncOp, dist::MeshOp)> run);
/// The same with the model of the pass's `--device` option (a name or a
/// JSON file), loaded only for a function on a mesh; its error is reported
/// at the module.
mlir::LogicalResult forEachFunctionOnMesh(
    mlir::ModuleOp module, llvm::StringRef device,
    llvm::function_ref<mlir::LogicalResult(mlir::func::FuncOp, dist::MeshOp, const DeviceModel &)>
        run);

dist::ShardingAttr toAttr(const ValueSharding &sharding, const MeshShape &shape, dist::MeshOp mesh);
/// Null when the attribute names axes the mesh lacks (the verifier reports it).
std::optional<ValueSharding> fromAttr(dist::ShardingAttr attr, const MeshShape &shape);

} // namespace shardc::sharding

#endif
