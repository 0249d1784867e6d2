//===- RankBlocks.cpp - which block of each weight a rank holds -----------===//
#include "compiler/Artifact/RankBlocks.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "passes/Sharding/ShardingConversion.h"
#include "passes/Sharding/ValueSharding.h"

#include <algorithm>

using namespace mlir;

namespace shardc::artifact {

FailureOr<RankBlock> rankBlockOf(exec::WeightOp weight, const sharding::MeshShape &mesh,
                                 ArrayRef<int64_t> coords) {
  auto type = cast<MemRefType>(weight.getType());
  RankBlock block;
  block.local.assign(type.getShape().begin(), type.getShape().end());
  if (weight->hasAttr(graph::kTransposedAttrName))
    std::reverse(block.local.begin(), block.local.end());
  block.global = block.local;
  block.offsets.assign(block.local.size(), 0);
  auto attr = weight->getAttrOfType<dist::ShardingAttr>(dist::kWeightShardAttrName);
  if (!attr)
    return block;
  std::optional<sharding::ValueSharding> cut = sharding::fromAttr(attr, mesh);
  if (!cut)
    return weight.emitOpError() << "has a sharding the mesh does not fit";
  for (auto [dim, axes] : llvm::enumerate(cut->dims))
    block.global[dim] = block.local[dim] * mesh.groupSize(axes);
  block.offsets = cut->localOffsets(block.global, mesh, coords);
  block.holdsValue = cut->holdsPartialValue(coords);
  return block;
}

FailureOr<std::vector<int64_t>> blocksKey(ArrayRef<func::FuncOp> programs,
                                          const sharding::MeshShape &mesh,
                                          ArrayRef<int64_t> coords) {
  std::vector<int64_t> key;
  for (func::FuncOp program : programs)
    for (auto weight : program.getBody().front().getOps<exec::WeightOp>()) {
      FailureOr<RankBlock> block = rankBlockOf(weight, mesh, coords);
      if (failed(block))
        return failure();
      key.insert(key.end(), block->offsets.begin(), block->offsets.end());
      key.push_back(block->holdsValue);
    }
  return key;
}

} // namespace shardc::artifact
