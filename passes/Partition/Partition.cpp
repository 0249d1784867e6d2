//===- Partition.cpp - the per-device program ------------------------------===//
#include "passes/Partition/Passes.h"

#include "passes/Sharding/ShardingConversion.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace shardc::sharding;

namespace shardc::partition {
#define GEN_PASS_DEF_PARTITIONPASS
#include "passes/Partition/Passes.h.inc"
} // namespace shardc::partition

namespace shardc::partition {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

class Partitioner {
public:
  Partitioner(dist::MeshOp mesh) : mesh(mesh), shape(meshShapeOf(mesh)) {}

  LogicalResult run(func::FuncOp function) {
    for (BlockArgument argument : function.getArguments())
      global[argument] = ValueSharding::replicated(tensorType(argument).getRank());
    for (Operation *op : llvm::to_vector(
             llvm::map_range(function.getBody().front(), [](Operation &op) { return &op; }))) {
      if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
        if (failed(lowerReshard(reshard)))
          return failure();
        continue;
      }
      if (failed(localize(op)))
        return failure();
    }
    return success();
  }

private:
  std::optional<ValueSharding> shardingOf(Value value) {
    auto found = global.find(value);
    if (found != global.end())
      return found->second;
    return std::nullopt;
  }

  /// Gives the op's results their local types; the op keeps its meaning
  /// because every operand already arrives in the sharding it needs.
  LogicalResult localize(Operation *op) {
    auto annotated = op->getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    if (!annotated) {
      for (Value result : op->getResults())
        if (auto type = dyn_cast<RankedTensorType>(result.getType()))
          global[result] = ValueSharding::replicated(type.getRank());
      return success();
    }
    SmallVector<int64_t> globalShape;
    if (op->getNumResults() == 1)
      if (auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType()))
        globalShape.assign(type.getShape().begin(), type.getShape().end());
    for (auto [result, attr] : llvm::zip(op->getResults(), annotated)) {
      auto sharding = fromAttr(cast<dist::ShardingAttr>(attr), shape);
      if (!sharding)
        return op->emitOpError() << "has a sharding the mesh does not fit";
      global[result] = *sharding;
      RankedTensorType type = tensorType(result);
      result.setType(RankedTensorType::get(sharding->localShape(type.getShape(), shape),
                                           type.getElementType()));
    }
    if (auto weight = dyn_cast<graph::WeightOp>(op)) {
      // The stored tensor stays whole in its file; the result is a block of
      // it: rank 0's box here, moved per rank by the sharding.
      if (!weight.getStoredShape()) {
        weight.setStoredShape(globalShape);
        weight.setBoxOffsets(SmallVector<int64_t>(globalShape.size(), 0));
      }
      weight->setAttr(dist::kWeightShardAttrName, annotated[0]);
    }
    op->removeAttr(dist::kShardingsAttrName);
    if (auto moe = dyn_cast<graph::MoeOp>(op))
      routeExperts(moe);
    // A slice keeps whole the dims it cuts; on split dims it takes everything,
    // which locally ends at the local size.
    if (auto slice = dyn_cast<graph::SliceOp>(op)) {
      SmallVector<int64_t> ends(slice.getEnds());
      ArrayRef<int64_t> local = slice.getType().getShape();
      for (auto [dim, end] : llvm::enumerate(ends))
        if (local[dim] < globalShape[dim])
          end = local[dim];
      slice.setEnds(ends);
    }
    return success();
  }

  /// Routed experts split over mesh axes name them, and exchange entries
  /// over them when the tokens are split over them too (docs/experts.md).
  void routeExperts(graph::MoeOp moe) {
    std::optional<ValueSharding> experts = shardingOf(moe.getDownWeight());
    std::optional<ValueSharding> tokens = shardingOf(moe.getInput());
    if (!experts || !tokens)
      return;
    const AxisList &expertAxes = experts->dims[0], &tokenAxes = tokens->dims[0];
    // Tokens split over other axes (dp replicas) never meet: each group of
    // them gets its share of the capacity.
    int64_t groups = 1;
    for (unsigned axis : tokenAxes)
      if (!llvm::is_contained(expertAxes, axis))
        groups *= shape.sizes[axis];
    if (moe.getCapacity() > 0 && groups > 1)
      moe.setCapacity((int64_t(moe.getCapacity()) + groups - 1) / groups);
    if (expertAxes.empty())
      return;
    Builder builder(moe.getContext());
    SmallVector<StringRef> names;
    for (unsigned axis : expertAxes)
      names.push_back(shape.names[axis]);
    moe.setExpertAxesAttr(builder.getStrArrayAttr(names));
    moe.setExchange(llvm::all_of(
        expertAxes, [&](unsigned axis) { return llvm::is_contained(tokenAxes, axis); }));
  }

  LogicalResult lowerReshard(dist::ReshardOp reshard) {
    Value input = reshard.getInput();
    std::optional<ValueSharding> from = shardingOf(input);
    std::optional<ValueSharding> to = fromAttr(reshard.getSharding(), shape);
    if (!from || !to)
      return reshard.emitOpError() << "needs a sharded input (run shardc-propagate-sharding)";
    RankedTensorType globalType = reshard.getType();
    auto steps = planReshard(*from, *to, globalType.getShape(), shape);
    if (!steps)
      return reshard.emitOpError() << "cannot make a partial sum from a complete value";
    OpBuilder builder(reshard);
    Value value = input;
    // A training pipeline's reshard runs on its stage (TrainingStages.h).
    Attribute stage = reshard->getAttr(dist::kPipelineStageAttrName);
    for (const CollectiveStep &step : *steps) {
      value = emit(builder, reshard.getLoc(), step, value);
      if (stage)
        value.getDefiningOp()->setAttr(dist::kPipelineStageAttrName, stage);
    }
    global[value] = *to;
    reshard.getResult().replaceAllUsesWith(value);
    reshard.erase();
    return success();
  }

  Value emit(OpBuilder &builder, Location location, const CollectiveStep &step, Value input);

  dist::MeshOp mesh;
  MeshShape shape;
  llvm::DenseMap<Value, ValueSharding> global;
};

Value Partitioner::emit(OpBuilder &builder, Location location, const CollectiveStep &step,
                        Value input) {
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  SmallVector<StringRef> axes;
  for (unsigned axis : step.axes)
    axes.push_back(shape.names[axis]);
  int64_t groupSize = shape.groupSize(step.axes);
  switch (step.kind) {
  case CollectiveKind::AllReduce:
    return builder.create<dist::AllReduceOp>(location, input, meshRef, axes);
  case CollectiveKind::ReduceScatter:
    return builder.create<dist::ReduceScatterOp>(location, input, meshRef, axes, step.dim,
                                                 groupSize);
  case CollectiveKind::AllGather:
    return builder.create<dist::AllGatherOp>(location, input, meshRef, axes, step.dim, groupSize);
  case CollectiveKind::AllToAll:
    return builder.create<dist::AllToAllOp>(location, input, meshRef, axes, step.dim,
                                            step.concatDim, groupSize);
  case CollectiveKind::AllSlice:
    return builder.create<dist::AllSliceOp>(location, input, meshRef, axes, step.dim, groupSize);
  }
  llvm_unreachable("every collective kind is handled");
}

struct PartitionPass : impl::PartitionPassBase<PartitionPass> {
  void runOnOperation() override {
    auto run = [](func::FuncOp function, dist::MeshOp mesh) {
      return Partitioner(mesh).run(function);
    };
    if (failed(forEachFunctionOnMesh(getOperation(), run)))
      signalPassFailure();
  }
};

} // namespace
} // namespace shardc::partition
