//===- ShardingConversion.h - #dist.sharding <-> ValueSharding --*- C++ -*-===//
#ifndef SHARDC_PASSES_SHARDING_SHARDINGCONVERSION_H
#define SHARDC_PASSES_SHARDING_SHARDINGCONVERSION_H

#include "passes/Sharding/ValueSharding.h"

#include "dialects/Dist/DistDialect.h"

#include "mlir/IR/BuiltinOps.h"

namespace shardc::sharding {

/// The module's mesh, or null when it has none (one device). More than one
/// mesh is an error reported at the module.
mlir::FailureOr<dist::MeshOp> findMesh(mlir::ModuleOp module);
MeshShape meshShapeOf(dist::MeshOp mesh);

dist::ShardingAttr toAttr(const ValueSharding &sharding, const MeshShape &shape,
                          dist::MeshOp mesh);
/// Null when the attribute names axes the mesh lacks (the verifier reports it).
std::optional<ValueSharding> fromAttr(dist::ShardingAttr attr, const MeshShape &shape);

} // namespace shardc::sharding

#endif
