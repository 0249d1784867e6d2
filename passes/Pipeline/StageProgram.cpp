//===- StageProgram.cpp - a sharded program seen as a sequence of stages --===//
#include "passes/Pipeline/StageProgram.h"

#include "passes/Pipeline/MicrobatchInvariant.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/MasterCopy.h"
#include "dialects/Graph/ModelStateBytes.h"
#include "dialects/Graph/TrainingPhase.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

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
    // Over the micro-batch axis a sum is an accumulation: a training step
    // adds each micro-batch's piece into a buffer, which costs no message.
    std::optional<unsigned> microbatchAxis = mesh.axis(rt::kMicroBatchAxis);
    if (steps)
      for (CollectiveStep step : *steps) {
        if (microbatchAxis)
          llvm::erase(step.axes, *microbatchAxis);
        if (step.axes.empty())
          continue;
        seconds += collectiveSeconds(
            step, graph::elementByteWidth(reshard.getType().getElementType()), mesh, device);
      }
    return seconds;
  }
  int64_t shards = 1, bytes = 0;
  SmallVector<int64_t> localResult;
  if (op->getNumResults() > 0) {
    ValueSharding result = shardingOf(op->getResult(0), mesh);
    for (const AxisList &axes : result.dims)
      shards *= mesh.groupSize(axes);
    shards *= mesh.groupSize(result.partial);
    if (auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType()))
      localResult = result.localShape(type.getShape(), mesh);
  }
  for (ValueRange values : {ValueRange(op->getOperands()), ValueRange(op->getResults())})
    for (Value value : values)
      if (isa<RankedTensorType>(value.getType()))
        bytes += localBytes(value, mesh);
  return opSeconds(op, shards, bytes, localResult, device);
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

namespace {

/// Places `op` (a weight, a constant or what only the inputs derive: copied
/// into each stage that uses it) or returns false.
bool place(Operation &op, StageProgram &program, const MeshShape &mesh,
           llvm::DenseMap<Operation *, unsigned> &weightIndex) {
  if (!isa<graph::WeightOp, graph::ConstantOp>(op) && !derivesFromInputs(&op, program.placed))
    return false;
  program.placed.insert(&op);
  if (isa<graph::WeightOp>(op)) {
    weightIndex[&op] = program.problem.weightBytes.size();
    program.problem.weightBytes.push_back(localBytes(op.getResult(0), mesh));
  }
  return true;
}

/// The search's figures of `program`'s sequence (StageSearch.h).
void measureSequence(StageProgram &program, const MeshShape &mesh, const DeviceModel &device,
                     const llvm::DenseMap<Operation *, unsigned> &weightIndex);

} // namespace

StageProgram analyzeStageProgram(func::FuncOp function, const MeshShape &mesh,
                                 const DeviceModel &device) {
  StageProgram program;
  llvm::DenseMap<Operation *, unsigned> weightIndex;
  for (Operation &op : function.getBody().front()) {
    if (isa<func::ReturnOp>(op) || place(op, program, mesh, weightIndex))
      continue;
    program.position[&op] = program.sequence.size();
    program.sequence.push_back(&op);
  }
  measureSequence(program, mesh, device, weightIndex);
  return program;
}

TrainingStageProgram analyzeTrainingStageProgram(func::FuncOp function, const MeshShape &mesh,
                                                 const DeviceModel &device,
                                                 int64_t microbatches,
                                                 StageProblem::Recompute recompute) {
  TrainingStageProgram training;
  StageProgram &program = training.forward;
  llvm::DenseMap<Operation *, unsigned> weightIndex;
  for (Operation &op : function.getBody().front()) {
    if (isa<func::ReturnOp>(op) || place(op, program, mesh, weightIndex))
      continue;
    // Before the first tagged op (a reshard of a weight at the top of the
    // step) is the forward too.
    if (graph::phaseOf(&op).value_or(graph::Phase::Forward) == graph::Phase::Forward) {
      program.position[&op] = program.sequence.size();
      program.sequence.push_back(&op);
    } else {
      training.others.push_back(&op);
    }
  }
  measureSequence(program, mesh, device, weightIndex);
  // Each forward op's own seconds, before its backward's join them.
  program.problem.recompute = recompute;
  program.problem.forwardSeconds = program.problem.opSeconds;
  // The weights' homes: the first forward op that reads each.
  for (auto [position, op] : llvm::enumerate(program.sequence))
    for (Value operand : op->getOperands())
      if (auto weight = operand.getDefiningOp<graph::WeightOp>())
        training.home.try_emplace(weight, position);
  StageProblem &problem = program.problem;
  // A trained weight's stage also holds its gradient and optimizer state,
  // the states found by name (NAME.exp_avg, NAME.momentum_buffer, ...), and
  // a mixed-precision step's master (NAME) is held where its copy
  // (NAME.bf16), which the forward reads, is: its bytes and its update
  // count there.
  llvm::StringMap<unsigned> trainedIndex;
  for (auto [weight, index] : weightIndex) {
    StringRef role = graph::trainRole(weight);
    if (!graph::holdsWeight(role))
      continue;
    auto name = cast<graph::WeightOp>(weight).getName();
    graph::ModelStateBytes state =
        graph::modelStateBytes(weight, double(problem.weightBytes[index]));
    problem.weightBytes[index] = int64_t(state.weights + state.gradients + state.states);
    if (role == graph::kTrainParam)
      trainedIndex.try_emplace(name, index);
  }
  for (auto [weight, index] : weightIndex) {
    graph::WeightOp master = graph::masterOf(cast<graph::WeightOp>(weight));
    auto read = training.home.find(weight);
    if (!master || read == training.home.end())
      continue;
    unsigned masterIndex = weightIndex.lookup(master);
    problem.weightBytes[index] += problem.weightBytes[masterIndex];
    problem.weightBytes[masterIndex] = 0;
    trainedIndex[master.getName()] = index;
    // A copy: inserting may grow the map and free the slot `read` is in.
    size_t home = read->second;
    training.home.try_emplace(master, home);
  }
  for (auto [weight, index] : weightIndex)
    if (graph::trainRole(weight) == graph::kTrainState) {
      StringRef name = cast<graph::WeightOp>(weight).getName();
      auto param = trainedIndex.find(name.substr(0, name.find_last_of('.')));
      if (param != trainedIndex.end())
        problem.weightBytes[param->second] += problem.weightBytes[index];
    }
  // What each forward op's results keep for the backward, per micro-batch
  // (what is alike on every micro-batch the backward computes again).
  problem.keptBytes.assign(program.sequence.size(), 0);
  MicrobatchInvariance invariant;
  for (auto [position, op] : llvm::enumerate(program.sequence)) {
    if (invariant(op))
      continue;
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !program.position.count(user) && !isa<func::ReturnOp>(user);
          }))
        problem.keptBytes[position] += localBytes(result, mesh);
  }
  // Each other op's time counts with the forward op it belongs to (the
  // latest forward value or weight it reads; the largest operand's for an
  // op that reads neither), the update's once per step.
  std::vector<double> &seconds = program.problem.opSeconds;
  for (Operation *op : training.others) {
    std::optional<size_t> owner = training.forwardOwner(op);
    if (!owner)
      continue;
    double cost = secondsOf(op, mesh, device);
    if (graph::phaseOf(op) == graph::Phase::Optimizer)
      cost /= double(std::max<int64_t>(microbatches, 1));
    seconds[*owner] += cost;
  }
  return training;
}

std::optional<size_t> TrainingStageProgram::forwardOwner(Operation *op) const {
  std::optional<size_t> latest;
  for (Value operand : op->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (!producer)
      continue;
    std::optional<size_t> at;
    if (auto found = forward.position.find(producer); found != forward.position.end())
      at = found->second;
    else if (auto weight = home.find(producer); weight != home.end())
      at = weight->second;
    if (at)
      latest = std::max(latest.value_or(0), *at);
  }
  return latest;
}

namespace {

void measureSequence(StageProgram &program, const MeshShape &mesh, const DeviceModel &device,
                     const llvm::DenseMap<Operation *, unsigned> &weightIndex) {
  StageProblem &problem = program.problem;
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
}

} // namespace

} // namespace shardc::pipeline
