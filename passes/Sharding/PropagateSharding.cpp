//===- PropagateSharding.cpp - complete shardings, make reshards explicit ---===//
#include "passes/Sharding/Passes.h"

#include "passes/Sharding/ShardingConversion.h"
#include "passes/Sharding/ShardingProblem.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
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
    Value &shared = reshards[{value, toAttr(wanted, problem.meshShape(), mesh)}];
    if (!shared) {
      // The report names the node that needs the reshard: the consumer, but
      // the producer for a pending sum (resolved where it was made) and for
      // a program result (made whole for the caller).
      bool resolvesSum = !have.partial.empty() && have.partial != wanted.partial;
      bool producerNeedsIt = resolvesSum || isa<func::ReturnOp>(operand.getOwner());
      Location location = producerNeedsIt && value.getDefiningOp() ? value.getDefiningOp()->getLoc()
                                                                   : operand.getOwner()->getLoc();
      shared = reshard(builder, value, wanted, location);
    }
    operand.set(shared);
    return success();
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
        Value &shared = reshards[{stored, toAttr(wanted, problem.meshShape(), mesh)}];
        if (!shared)
          shared = reshard(builder, stored, wanted, operand->getOwner()->getLoc());
        operand->set(shared);
      }
    }
    return success();
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
  llvm::DenseMap<std::pair<Value, Attribute>, Value> reshards;
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
