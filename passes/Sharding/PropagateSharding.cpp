//===- PropagateSharding.cpp - complete shardings, make reshards explicit ---===//
#include "passes/Sharding/Passes.h"

#include "passes/Sharding/ShardingConversion.h"
#include "passes/Sharding/ShardingProblem.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

#include <limits>

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_PROPAGATESHARDINGPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

class Propagation {
public:
  Propagation(ShardingProblem &problem, dist::MeshOp mesh) : problem(problem), mesh(mesh) {}

  LogicalResult run(func::FuncOp function) {
    const MeshShape &shape = problem.meshShape();
    Block &body = function.getBody().front();
    OpBuilder builder(function.getContext());
    builder.setInsertionPointToStart(&body);
    for (BlockArgument argument : function.getArguments()) {
      auto attr = function.getArgAttrOfType<dist::ShardingAttr>(argument.getArgNumber(),
                                                                dist::kArgShardingAttrName);
      std::optional<ValueSharding> wanted;
      if (attr && !(wanted = fromAttr(attr, shape)))
        return function.emitError()
               << "argument " << argument.getArgNumber() << " has a sharding the mesh does not fit";
      current[argument] = ValueSharding::replicated(tensorType(argument).getRank());
      if (wanted && *wanted != current[argument]) {
        // Every device receives the whole input; the annotation asks for its share.
        Value shard = reshard(builder, argument, *wanted, argument.getLoc());
        argument.replaceAllUsesExcept(shard, shard.getDefiningOp());
      }
    }
    for (Operation *op :
         llvm::to_vector(llvm::map_range(body, [](Operation &op) { return &op; }))) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        builder.setInsertionPoint(ret);
        for (OpOperand &operand : ret->getOpOperands())
          if (failed(deliver(builder, operand,
                             ValueSharding::replicated(tensorType(operand.get()).getRank()))))
            return failure();
        continue;
      }
      if (!ShardingProblem::takesPart(op))
        continue;
      if (failed(place(builder, op)))
        return failure();
    }
    if (failed(deliverTrainedWeights(builder)))
      return failure();
    for (Operation &op : llvm::make_early_inc_range(body))
      if (isa<graph::WeightOp>(op) && op.use_empty())
        op.erase();
    return success();
  }

private:
  ValueSharding shardingOf(Value value) {
    auto found = current.find(value);
    return found != current.end() ? found->second
                                  : ValueSharding::replicated(tensorType(value).getRank());
  }

  double operandCost(const OpChoices &op, unsigned strategy) {
    double cost = 0;
    for (auto [position, operand] : llvm::enumerate(op.op->getOperands()))
      cost += problem.reshardSeconds(operand, shardingOf(operand), op.operands[strategy][position]);
    return cost;
  }

  /// Chooses `op`'s strategy, reshards its operands, records its results.
  LogicalResult place(OpBuilder &builder, Operation *op) {
    const OpChoices &choices = problem.choices()[*problem.indexOf(op)];
    auto annotated = op->getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    std::vector<ValueSharding> wanted;
    if (annotated) {
      for (Attribute attr : annotated) {
        auto sharding = fromAttr(cast<dist::ShardingAttr>(attr), problem.meshShape());
        if (!sharding)
          return op->emitOpError() << "has a sharding the mesh does not fit";
        wanted.push_back(*sharding);
      }
    }
    // The search's operand shardings, where results alone are ambiguous.
    std::vector<ValueSharding> wantedOperands;
    if (auto operands = op->getAttrOfType<ArrayAttr>(dist::kOperandShardingsAttrName)) {
      for (Attribute attr : operands) {
        auto sharding = fromAttr(cast<dist::ShardingAttr>(attr), problem.meshShape());
        if (!sharding)
          return op->emitOpError() << "has a sharding the mesh does not fit";
        wantedOperands.push_back(*sharding);
      }
      op->removeAttr(dist::kOperandShardingsAttrName);
    }
    // Annotations win: among the strategies that produce them, the cheapest
    // to feed; without one (or none that fits), the cheapest overall.
    double best = std::numeric_limits<double>::infinity();
    std::optional<unsigned> pick;
    for (unsigned pass = 0; pass < 2 && !pick; ++pass)
      for (unsigned strategy = 0; strategy < choices.strategies.size(); ++strategy) {
        bool produces = llvm::equal(choices.results[strategy], wanted) &&
                        (wantedOperands.empty() ||
                         llvm::equal(choices.operands[strategy], wantedOperands));
        if (pass == 0 && (annotated || !wantedOperands.empty()) && !produces)
          continue;
        double cost = operandCost(choices, strategy);
        if (cost < best) {
          best = cost;
          pick = strategy;
        }
      }
    if (!pick)
      return op->emitOpError() << "cannot be fed: no strategy accepts its operands' shardings";
    builder.setInsertionPoint(op);
    for (OpOperand &operand : op->getOpOperands())
      if (failed(deliver(builder, operand, choices.operands[*pick][operand.getOperandNumber()])))
        return failure();
    SmallVector<dist::ShardingAttr> attrs;
    for (auto [position, result] : llvm::enumerate(op->getResults())) {
      current[result] = choices.results[*pick][position];
      attrs.push_back(toAttr(current[result], problem.meshShape(), mesh));
    }
    dist::setResultShardings(op, attrs);
    if (!annotated || llvm::equal(choices.results[*pick], wanted))
      return success();
    // The annotation could not be produced directly: reshard to it after the op.
    builder.setInsertionPointAfter(op);
    for (auto [position, result] : llvm::enumerate(op->getResults())) {
      if (current[result] == wanted[position])
        continue;
      Value shard = reshard(builder, result, wanted[position], op->getLoc());
      result.replaceAllUsesExcept(shard, shard.getDefiningOp());
    }
    return success();
  }

  /// Makes `operand` arrive as `wanted`: weights are cut at compile time
  /// (one clone per sharding), everything else is resharded.
  LogicalResult deliver(OpBuilder &builder, OpOperand &operand, const ValueSharding &wanted) {
    Value value = operand.get();
    if (auto weight = value.getDefiningOp<graph::WeightOp>();
        weight && weight->hasAttr(graph::kTrainAttrName)) {
      trainedUses[weight].push_back({&operand, wanted});
      return success();
    }
    if (auto weight = value.getDefiningOp<graph::WeightOp>()) {
      Value &clone = weightClones[{weight, toAttr(wanted, problem.meshShape(), mesh)}];
      if (!clone) {
        OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(weight);
        clone = builder.clone(*weight)->getResult(0);
        dist::setResultShardings(clone.getDefiningOp(),
                                 {toAttr(wanted, problem.meshShape(), mesh)});
      }
      operand.set(clone);
      return success();
    }
    ValueSharding have = shardingOf(value);
    if (have == wanted)
      return success();
    if (!problem.canReshard(value, have, wanted))
      return operand.getOwner()->emitOpError()
             << "operand " << operand.getOperandNumber()
             << " must be a partial sum, which its producer does not give";
    // Consumers that want the same sharding share one reshard (the search
    // priced it once).
    Value &shared = reshards[{value, toAttr(wanted, problem.meshShape(), mesh), -1}];
    // The search converts a value read several times once, to one sharding
    // its consumers share, and prices each consumer's part from there: a
    // consumer whose part an earlier reshard already holds slices it
    // (no second sum over the same devices).
    if (!shared)
      if (Value held = slicedFromEarlier(value, wanted)) {
        shared = reshard(builder, held, wanted, operand.getOwner()->getLoc());
        operand.set(shared);
        return success();
      }
    if (!shared) {
      // The report names the node that needs the reshard: the consumer, but
      // the producer for a pending sum (resolved where it was made) and for
      // a program result (made whole for the caller).
      bool resolvesSum = !have.partial.empty() && have.partial != wanted.partial;
      bool producerNeedsIt = resolvesSum || isa<func::ReturnOp>(operand.getOwner());
      Location location = producerNeedsIt && value.getDefiningOp() ? value.getDefiningOp()->getLoc()
                                                                   : operand.getOwner()->getLoc();
      shared = reshard(builder, value, wanted, location);
      earlierReshards[value].push_back(shared);
    }
    operand.set(shared);
    return success();
  }

  /// An earlier reshard of `value` that holds every device's part of
  /// `wanted`, so that slicing it moves nothing; null when none does.
  Value slicedFromEarlier(Value value, const ValueSharding &wanted) {
    auto found = earlierReshards.find(value);
    if (found == earlierReshards.end())
      return {};
    for (Value held : found->second) {
      std::optional<SmallVector<CollectiveStep, 4>> steps =
          planReshard(current[held], wanted, tensorType(value).getShape(), problem.meshShape());
      if (steps && llvm::all_of(*steps, [](const CollectiveStep &step) {
            return step.kind == CollectiveKind::AllSlice;
          }))
        return held;
    }
    return {};
  }

  /// A trained weight is one storage that the step writes (graph.assign):
  /// it is held as its write wants it, and every other use is resharded
  /// from that at run time, instead of being cut once per use at compile
  /// time as a constant weight is.
  LogicalResult deliverTrainedWeights(OpBuilder &builder) {
    for (auto &[weight, uses] : trainedUses) {
      auto write = llvm::find_if(uses, [](const auto &use) {
        return isa<graph::AssignOp>(use.first->getOwner()) && use.first->getOperandNumber() == 0;
      });
      const ValueSharding &home = write != uses.end() ? write->second : uses.front().second;
      builder.setInsertionPoint(weight);
      Value stored = builder.clone(*weight)->getResult(0);
      dist::setResultShardings(stored.getDefiningOp(), {toAttr(home, problem.meshShape(), mesh)});
      current[stored] = home;
      builder.setInsertionPointAfter(stored.getDefiningOp());
      bool gatheredPerPart = splitsOverDp(home);
      for (auto &[operand, wanted] : uses) {
        if (wanted == home) {
          operand->set(stored);
          continue;
        }
        // canReshard calls any part of a weight free; this one is moved at
        // run time, and a share of a sum cannot be made from it.
        if (problem.runTimeReshardSeconds(stored, home, wanted) ==
            std::numeric_limits<double>::infinity())
          return operand->getOwner()->emitOpError()
                 << "operand " << operand->getOperandNumber()
                 << " is a trained weight it wants as a partial sum, which its storage is not";
        Operation *reader = operand->getOwner();
        // ZeRO-3 (a weight stored split over dp): the step gathers it once
        // per part (forward, backward, update), right before the part's
        // first reader (uses come in op order), so the gathered copy lives
        // from there to the part's last reader and no longer: a layer's
        // weights are whole only while that layer runs, and the backward
        // gathers them again (ZeRO's 3 volumes, docs/training.md).
        int part = -1;
        if (gatheredPerPart)
          part = int(graph::phaseOf(reader).value_or(graph::Phase::Forward));
        Value &shared = reshards[{stored, toAttr(wanted, problem.meshShape(), mesh), part}];
        if (!shared) {
          OpBuilder::InsertionGuard guard(builder);
          if (gatheredPerPart)
            builder.setInsertionPoint(reader);
          shared = reshard(builder, stored, wanted, reader->getLoc());
          if (gatheredPerPart)
            partGathers.push_back(shared.getDefiningOp());
        }
        operand->set(shared);
      }
    }
    prefetchGathers();
    return success();
  }

  /// Whether `sharding` splits some dim over dp: a weight stored so is
  /// ZeRO-3's (nothing else splits a weight over dp).
  bool splitsOverDp(const ValueSharding &sharding) const {
    std::optional<unsigned> dp = problem.meshShape().axis(rt::kDataAxis);
    return dp && sharding.splitsOver(*dp);
  }

  /// ZeRO-3's prefetch: each gather is issued where the weight gathered
  /// before it is first read, one weight ahead, so a backend that runs
  /// collectives beside compute overlaps it with that weight's op; the
  /// gathered copies in flight are then at most two (the report's
  /// gathered_param_bytes). The first gather of a part (the backward's)
  /// moves into the part before it, as FSDP prefetches the backward's
  /// first unit during the forward's last.
  void prefetchGathers() {
    llvm::sort(partGathers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    llvm::DenseSet<Operation *> gathers(partGathers.begin(), partGathers.end());
    for (size_t index = partGathers.size(); index-- > 1;) {
      Operation *gather = partGathers[index];
      Operation *previous = partGathers[index - 1];
      Operation *source = gather->getOperand(0).getDefiningOp();
      // The previous weight's first reader comes right after its gather's
      // neighbours in the chain; issue this one just before that reader.
      Operation *target = previous->getNextNode();
      while (target && gathers.contains(target))
        target = target->getNextNode();
      if (!target || !target->isBeforeInBlock(gather) || !source->isBeforeInBlock(target))
        continue;
      gather->moveBefore(target);
    }
  }

  Value reshard(OpBuilder &builder, Value value, const ValueSharding &wanted, Location location) {
    auto op =
        builder.create<dist::ReshardOp>(location, value, toAttr(wanted, problem.meshShape(), mesh));
    current[op.getResult()] = wanted;
    return op.getResult();
  }

  ShardingProblem &problem;
  dist::MeshOp mesh;
  llvm::DenseMap<Value, ValueSharding> current;
  llvm::DenseMap<std::pair<Operation *, Attribute>, Value> weightClones;
  /// Each trained weight's uses and the sharding each wants, in op order.
  llvm::MapVector<Operation *, SmallVector<std::pair<OpOperand *, ValueSharding>>> trainedUses;
  /// Shared reshards: per value and sharding, and for ZeRO-3's gathers per
  /// part of the step too (the graph::Phase; -1 for the others).
  llvm::DenseMap<std::tuple<Value, Attribute, int>, Value> reshards;
  /// The reshards made of each value, in op order.
  llvm::DenseMap<Value, SmallVector<Value, 2>> earlierReshards;
  /// ZeRO-3's gathers, one per weight and part.
  std::vector<Operation *> partGathers;
};

struct PropagateShardingPass : impl::PropagateShardingPassBase<PropagateShardingPass> {
  using Base::Base;

  void runOnOperation() override {
    auto run = [&](func::FuncOp function, dist::MeshOp mesh,
                   const DeviceModel &model) -> LogicalResult {
      ShardingOptions options{model, false, false};
      options.followAnnotations = true;
      ShardingProblem problem(function, meshShapeOf(mesh), options);
      if (failed(problem.build()))
        return failure();
      return Propagation(problem, mesh).run(function);
    };
    if (failed(forEachFunctionOnMesh(getOperation(), device, run)))
      signalPassFailure();
  }
};

} // namespace
} // namespace shardc::sharding
