//===- StageProgram.cpp - a sharded program seen as a sequence of stages --===//
#include "passes/Pipeline/StageProgram.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Sharding/ShardingConversion.h"

using namespace mlir;
using namespace shardc::sharding;

namespace shardc::pipeline {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

ValueSharding shardingOf(Value value, const MeshShape &mesh) {
  if (dist::ShardingAttr attr = dist::getResultSharding(value))
    if (std::optional<ValueSharding> sharding = fromAttr(attr, mesh))
      return *sharding;
  return ValueSharding::replicated(tensorType(value).getRank());
}

/// Flops per result element up to which an op counts as cheap to compute
/// again (elementwise ops, comparisons, moves; not contractions).
constexpr double kCheapFlopsPerElement = 8;

/// An op whose operands are all inputs, constants or ops like it, that reads
/// no weight and does little work per element: each stage may compute it
/// again.
bool derivesFromInputs(Operation *op, const llvm::DenseSet<Operation *> &placed) {
  if (isa<graph::WeightOp>(op) || op->getNumResults() == 0)
    return false;
  double elements = 0;
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType()))
      elements += double(type.getNumElements());
  if (opFlops(op) > kCheapFlopsPerElement * std::max(elements, 1.0))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    Operation *producer = operand.getDefiningOp();
    return !producer || (placed.contains(producer) && !isa<graph::WeightOp>(producer));
  });
}

double secondsOf(Operation *op, const MeshShape &mesh, const DeviceModel &device) {
  if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
    auto to = fromAttr(reshard.getSharding(), mesh);
    ValueSharding from = shardingOf(reshard.getInput(), mesh);
    SmallVector<int64_t> shape(reshard.getType().getShape());
    // What the program returns is gathered over the micro-batches and the
    // leading batch axes by the runtime after the step, not by the stage.
    if (llvm::all_of(reshard->getUsers(),
                     [](Operation *user) { return isa<func::ReturnOp>(user); }))
      (void)returnedByRuntime(from, shape, mesh);
    auto steps = to ? planReshard(from, *to, shape, mesh) : std::nullopt;
    double seconds = 0;
    if (steps)
      for (const CollectiveStep &step : *steps)
        seconds += collectiveSeconds(
            step, graph::elementByteWidth(reshard.getType().getElementType()), mesh, device);
    return seconds;
  }
  int64_t shards = 1, bytes = 0;
  if (op->getNumResults() > 0) {
    ValueSharding result = shardingOf(op->getResult(0), mesh);
    for (const AxisList &axes : result.dims)
      shards *= mesh.groupSize(axes);
    shards *= mesh.groupSize(result.partial);
  }
  for (ValueRange values : {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value value : values)
      if (isa<RankedTensorType>(value.getType()))
        bytes += localBytes(value, mesh);
  return opSeconds(op, shards, bytes, device);
}

} // namespace

const Link &stageLink(const MeshShape &stages, const DeviceModel &device) {
  return devicesOfStages(stages, 1).devices() < device.devicesPerNode ? device.intraNode
                                                                      : device.interNode;
}

int64_t localBytes(Value value, const MeshShape &mesh) {
  return tensorBytes(shardingOf(value, mesh).localShape(tensorType(value).getShape(), mesh),
                     tensorType(value).getElementType());
}

StageProgram analyzeStageProgram(func::FuncOp function, const MeshShape &mesh,
                                 const DeviceModel &device) {
  StageProgram program;
  StageProblem &problem = program.problem;
  llvm::DenseMap<Operation *, unsigned> weightIndex;
  for (Operation &op : function.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (isa<graph::WeightOp, graph::ConstantOp>(op) || derivesFromInputs(&op, program.placed)) {
      program.placed.insert(&op);
      if (isa<graph::WeightOp>(op)) {
        weightIndex[&op] = problem.weightBytes.size();
        problem.weightBytes.push_back(localBytes(op.getResult(0), mesh));
      }
      continue;
    }
    program.position[&op] = program.sequence.size();
    program.sequence.push_back(&op);
  }
  size_t ops = program.sequence.size();
  problem.opSeconds.resize(ops);
  problem.opWeights.resize(ops);
  std::vector<int64_t> crossing(ops + 2, 0), crossingValues(ops + 2, 0), live(ops + 2, 0);
  for (auto [index, op] : llvm::enumerate(program.sequence)) {
    problem.opSeconds[index] = secondsOf(op, mesh, device);
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp(); producer && weightIndex.count(producer))
        problem.opWeights[index].push_back(weightIndex.lookup(producer));
    for (Value result : op->getResults()) {
      // The value lives from its op to its last user; the return counts as
      // the last op (what the program returns goes to the last stage).
      size_t last = index;
      for (Operation *user : result.getUsers())
        last = std::max(last, isa<func::ReturnOp>(user) ? ops - 1 : program.position.lookup(user));
      int64_t bytes = localBytes(result, mesh);
      crossing[index + 1] += bytes;
      crossing[last + 1] -= bytes;
      crossingValues[index + 1] += 1;
      crossingValues[last + 1] -= 1;
      live[index] += bytes;
      live[last + 1] -= bytes;
    }
  }
  problem.crossingBytes.assign(ops + 1, 0);
  problem.crossingValues.assign(ops + 1, 0);
  problem.liveBytes.assign(ops, 0);
  int64_t crossingSum = 0, valueSum = 0, liveSum = 0;
  for (size_t position = 0; position < ops; ++position) {
    crossingSum += crossing[position];
    valueSum += crossingValues[position];
    liveSum += live[position];
    problem.crossingBytes[position] = position == 0 ? 0 : crossingSum;
    problem.crossingValues[position] = position == 0 ? 0 : valueSum;
    problem.liveBytes[position] = liveSum;
  }
  return program;
}

} // namespace shardc::pipeline
