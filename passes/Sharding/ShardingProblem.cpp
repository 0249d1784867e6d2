//===- ShardingProblem.cpp - strategies and their costs, op by op ---------===//
#include "passes/Sharding/ShardingProblem.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"
#include "passes/Sharding/RoutedExchange.h"
#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

#include <limits>

using namespace mlir;

namespace shardc::sharding {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [index, dim] : llvm::enumerate(shape))
    text += (index ? ", " : "") + std::to_string(dim);
  return text + "]";
}

} // namespace

SourceKind ShardingProblem::sourceKind(Value value) {
  Operation *producer = value.getDefiningOp();
  if (isa_and_nonnull<graph::WeightOp>(producer))
    return SourceKind::Weight;
  if (!producer || isa<graph::ConstantOp>(producer))
    return SourceKind::Complete;
  return SourceKind::Op;
}

/// Whether `op` reads a routed expert's weight: in a training step its
/// gradient's ops and its update do, and may take it split over ep as the
/// forward's graph.moe stores it (the update must: it writes that storage).
static bool usesExpertWeights(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    return ShardingProblem::sourceKind(operand) == SourceKind::Weight &&
           llvm::any_of(operand.getUsers(),
                        [](Operation *user) { return isa<graph::MoeOp>(user); });
  });
}

bool ShardingProblem::takesPart(Operation *op) {
  // Reshards are what propagation writes: they have a sharding, not a choice.
  return !isa<graph::WeightOp, graph::ConstantOp, func::ReturnOp, dist::ReshardOp>(op);
}

std::optional<unsigned> ShardingProblem::indexOf(Operation *op) const {
  auto found = index.find(op);
  if (found == index.end())
    return std::nullopt;
  return found->second;
}

namespace {

/// A router (its scores reach a top-k through order-keeping ops) or a gate
/// (one score per token): linear layers that score tokens. Megatron-LM keeps
/// their small weights whole on every tp rank; a split would cost a
/// collective per layer to save a few kilobytes.
bool scoresTokens(Operation *op) {
  Value scores = op->getResult(0);
  if (cast<RankedTensorType>(scores.getType()).getShape().back() == 1)
    return true;
  for (int step = 0; step < 3; ++step) {
    if (!scores.hasOneUse())
      return false;
    Operation *user = *scores.getUsers().begin();
    if (isa<graph::TopKOp>(user))
      return true;
    if (!isa<graph::SoftmaxOp, graph::SigmoidOp, graph::CastOp>(user))
      return false;
    scores = user->getResult(0);
  }
  return false;
}

/// A selection of weights that a product consumes: the experts' matrices
/// gathered by the router's choices (batched MoE experts).
bool selectsWeightsForProduct(Operation *op) {
  return isa<graph::GatherOp, graph::GatherNdOp>(op) &&
         llvm::any_of(op->getUsers(),
                      [](Operation *user) { return isa<graph::LinearOp, graph::MatMulOp>(user); });
}

} // namespace

double ShardingProblem::exchangeSeconds(Operation *op, const Strategy &strategy,
                                        ArrayRef<ValueSharding> operands) const {
  auto moe = dyn_cast<graph::MoeOp>(op);
  AxisList routed;
  for (auto [axis, factor] : llvm::enumerate(strategy.axisFactor))
    if (factor == Strategy::kRouted)
      routed.push_back(axis);
  if (!moe || routed.empty())
    return 0;
  // Every entry of the device's tokens to its expert's device and back.
  RankedTensorType input = moe.getInput().getType();
  int64_t tokens = operands[0].localShape(input.getShape(), mesh)[0];
  int64_t elementBytes = graph::elementByteWidth(input.getElementType());
  return 2 * collectiveSeconds(routedExchangeStep(moe, tokens, routed), elementBytes, mesh,
                               options.device);
}

/// Whether `value` is a weight's gradient as the optimizer's `reader` reads
/// it: computed by the backward.
static bool isGradientRead(Value value, Operation *reader) {
  Operation *producer = value.getDefiningOp();
  return producer && graph::phaseOf(reader) == graph::Phase::Optimizer &&
         graph::phaseOf(producer) == graph::Phase::Backward;
}

bool ShardingProblem::updatesSliceOverDp(Operation *op) const {
  std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
  if (options.zeroStage == 0 || !options.applyPolicies || !dp ||
      graph::phaseOf(op) != graph::Phase::Optimizer)
    return false;
  bool any = false;
  for (Value operand : op->getOperands()) {
    auto weight = operand.getDefiningOp<graph::WeightOp>();
    if (!weight)
      continue;
    if (graph::trainRole(weight).empty())
      return false;
    any = true;
    if (llvm::none_of(weight.getType().getShape(),
                      [&](int64_t size) { return size % mesh.sizes[*dp] == 0; }))
      return false;
  }
  return any;
}

StrategyLimits ShardingProblem::limitsFor(Operation *op) {
  StrategyLimits limits;
  limits.weightOperands.resize(op->getNumOperands());
  for (auto [position, operand] : llvm::enumerate(op->getOperands()))
    if (sourceKind(operand) == SourceKind::Weight)
      limits.weightOperands.set(position);
  limits.axisMaySplitWeights.resize(mesh.numAxes());
  limits.axisMustSplitWeights.resize(mesh.numAxes());
  // Data parallelism (and the micro-batch axis, data parallelism in time)
  // replicates weights (but ZeRO's update, below);
  // --tp means every linear layer's weight is split over tp (experts'
  // included: gathered per token, or routed experts'), but routers' and
  // gates'.
  bool hasWeights =
      limits.weightOperands.any() &&
      ((isa<graph::LinearOp, graph::MatMulOp>(op) && !scoresTokens(op)) || isa<graph::MoeOp>(op) ||
       selectsWeightsForProduct(op) || (options.splitEmbeddings && isa<graph::GatherOp>(op)));
  bool expertWeights = usesExpertWeights(op);
  for (unsigned axis = 0; axis < mesh.numAxes(); ++axis) {
    // The expert axis splits the batch, and the experts of routed experts.
    bool expertAxis = mesh.names[axis] == rt::kExpertAxis;
    bool splitsExperts = isa<graph::MoeOp>(op) && expertAxis;
    if (!rt::splitsBatch(mesh.names[axis]) || splitsExperts || (expertAxis && expertWeights) ||
        !options.applyPolicies)
      limits.axisMaySplitWeights.set(axis);
    if (mesh.names[axis] == rt::kTensorAxis && hasWeights && options.applyPolicies)
      limits.axisMustSplitWeights.set(axis);
    // --ep means the experts are split over ep, as --tp means the linear
    // layers are over tp; the costs choose how (entries exchanged, or
    // tokens whole and partial sums).
    if (splitsExperts && options.applyPolicies)
      limits.axisMustSplitWeights.set(axis);
  }
  // ZeRO: each dp rank updates its slice of what the optimizer reads of the
  // trained weights and states, biases and norm scales included.
  // The write takes the storage as it is placed (AutoShard's homes),
  // split over dp or not.
  if (updatesSliceOverDp(op)) {
    unsigned dp = *mesh.axis(rt::kDataAxis);
    limits.axisMaySplitWeights.set(dp);
    if (!isa<graph::AssignOp>(op)) {
      limits.axisMustSplitWeights.set(dp);
      limits.mustSplitVectors = true;
    }
  }
  return limits;
}

llvm::SmallBitVector ShardingProblem::batchFactors(Operation *op, const OpShardingRule &rule) {
  llvm::SmallBitVector factors(rule.factors.size());
  for (auto [position, operand] : llvm::enumerate(op->getOperands())) {
    auto found = batchDims.find(operand);
    if (found == batchDims.end())
      continue;
    // A dim that merges the batch with other dims ([b*s] of flattened
    // tokens) holds it as its major factor: when the op splits that dim
    // again ([b*s] -> [b, s]), only the first part carries the batch, and
    // the sequence stays free of the batch axes' policy.
    for (unsigned dim : found->second.set_bits())
      if (!rule.operands[position][dim].empty())
        factors.set(rule.operands[position][dim].front());
  }
  return factors;
}

void ShardingProblem::labelBatch(Operation *op, const OpShardingRule &rule,
                                 const llvm::SmallBitVector &factors) {
  for (auto [position, result] : llvm::enumerate(op->getResults())) {
    llvm::SmallBitVector dims(rule.results[position].size());
    for (auto [dim, dimFactors] : llvm::enumerate(rule.results[position]))
      for (unsigned factor : dimFactors)
        if (factors.test(factor))
          dims.set(dim);
    if (dims.any())
      batchDims[result] = dims;
  }
}

/// The shardings an annotation of `op` names (empty without one, or with
/// one the mesh does not fit: propagation reports that).
static SmallVector<ValueSharding> annotatedShardings(Operation *op, StringRef name,
                                                     const MeshShape &mesh) {
  SmallVector<ValueSharding> shardings;
  if (auto annotated = op->getAttrOfType<ArrayAttr>(name))
    for (Attribute attr : annotated) {
      auto sharding = fromAttr(cast<dist::ShardingAttr>(attr), mesh);
      if (!sharding)
        return {};
      shardings.push_back(*sharding);
    }
  return shardings;
}

void ShardingProblem::keepAnnotatedStrategies(Operation *op, OpChoices &choices) const {
  SmallVector<ValueSharding> results = annotatedShardings(op, dist::kShardingsAttrName, mesh);
  SmallVector<ValueSharding> operands =
      annotatedShardings(op, dist::kOperandShardingsAttrName, mesh);
  if (results.empty() && operands.empty())
    return;
  auto produces = [&](const Strategy &strategy) {
    for (auto [position, wanted] : llvm::enumerate(results))
      if (resultSharding(choices.rule, strategy, position) != wanted)
        return false;
    for (auto [position, wanted] : llvm::enumerate(operands))
      if (operandSharding(choices.rule, strategy, position) != wanted)
        return false;
    return true;
  };
  SmallVector<Strategy> kept(llvm::make_filter_range(choices.strategies, produces));
  if (!kept.empty())
    choices.strategies = std::move(kept);
}

LogicalResult ShardingProblem::addOp(Operation *op) {
  if (isa<graph::CompositeOp>(op))
    return op->emitOpError() << "must be inlined before sharding (run shardc-inline-composites)";
  OpChoices choices;
  choices.op = op;
  choices.rule = getShardingRule(op);
  StrategyLimits limits = limitsFor(op);
  // The activations between blocks (what norms read): with --sp split along
  // the sequence (the dim before the normalized ones) over tp, without it
  // whole over tp, as Megatron-LM keeps them: the block's partial sums are
  // then resolved by one all-reduce rather than split into cheaper pieces.
  std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
  bool isNorm = isa<graph::LayerNormOp, graph::RmsNormOp>(op);
  bool feedsNorm = llvm::any_of(op->getUsers(), [](Operation *user) {
    return isa<graph::LayerNormOp, graph::RmsNormOp>(user);
  });
  std::function<bool(const Strategy &)> betweenBlocks = [&](const Strategy &strategy) {
    int tpFactor = strategy.axisFactor[*tp];
    if (!options.sequenceParallel)
      return tpFactor == Strategy::kNone;
    if (!isNorm) {
      // The stream itself stays split along the sequence (what --sp is for:
      // activations between blocks held 1/tp per rank).
      for (Operation *user : op->getUsers()) {
        int64_t axis = isa<graph::LayerNormOp>(user) ? cast<graph::LayerNormOp>(user).getAxis()
                       : isa<graph::RmsNormOp>(user) ? cast<graph::RmsNormOp>(user).getAxis()
                                                     : -1;
        if (axis < 1 || op->getNumResults() != 1 || choices.rule.results.empty())
          continue;
        const DimFactors &factors = choices.rule.results[0][axis - 1];
        return factors.empty() || llvm::is_contained(factors, tpFactor);
      }
      return true;
    }
    int64_t axis = isa<graph::LayerNormOp>(op) ? cast<graph::LayerNormOp>(op).getAxis()
                                               : cast<graph::RmsNormOp>(op).getAxis();
    const DimFactors &factors = choices.rule.operands[0][std::max<int64_t>(axis - 1, 0)];
    // A stream several norms read (a parallel-residual block: attention and
    // MLP both normalize x) may instead be gathered once and normalized
    // whole: one all-gather instead of one per norm.
    bool sharedStream = llvm::count_if(op->getOperand(0).getUsers(), [](Operation *user) {
                          return isa<graph::LayerNormOp, graph::RmsNormOp>(user);
                        }) > 1;
    return axis < 1 || factors.empty() || llvm::is_contained(factors, tpFactor) ||
           (sharedStream && tpFactor == Strategy::kNone);
  };
  // --dp (and the micro-batches) split the batch: the factors that carry
  // dim 0 of the program's inputs. When the batch cannot be split (a batch
  // of one), they repeat the op.
  llvm::SmallVector<unsigned, 2> batchAxes;
  for (unsigned axis = 0; axis < mesh.numAxes(); ++axis)
    if (rt::splitsBatch(mesh.names[axis]))
      batchAxes.push_back(axis);
  llvm::SmallBitVector batch = batchFactors(op, choices.rule);
  // The micro-batch axis may also leave an op whole (every micro-batch then
  // computes it on the whole batch, from whole inputs): it cannot gather,
  // so an op that needs the batch whole (a gather by batch row) must be
  // computed whole rather than split and gathered; the costs choose. Not in
  // a training step: its micro-batches run inside one program, which has
  // no micro-batch index to take a whole value's rows by, and whatever the
  // batch flows into is split (a step on the whole batch per micro-batch
  // would defeat them).
  bool expertWeights = usesExpertWeights(op);
  // ZeRO: dp splits the update's slices, which hold no batch.
  bool zeroUpdate = options.zeroStage > 0 && graph::phaseOf(op) == graph::Phase::Optimizer;
  auto policy = [&](const Strategy &strategy, bool splitBatch) {
    for (unsigned axis : batchAxes) {
      // ep may split an expert's weight instead of the batch.
      if (expertWeights && mesh.names[axis] == rt::kExpertAxis)
        continue;
      if (zeroUpdate && mesh.names[axis] == rt::kDataAxis)
        continue;
      int factor = strategy.axisFactor[axis];
      // Routed experts split the tokens (and the experts) on a routed axis.
      if (factor == Strategy::kRouted)
        factor = int(choices.rule.routed->first);
      bool onBatch = factor >= 0 && batch.test(factor);
      bool mayStayWhole =
          !splitBatch || (mesh.names[axis] == rt::kMicroBatchAxis && !accumulatesMicrobatches);
      if (!onBatch && !(mayStayWhole && factor == Strategy::kNone))
        return false;
    }
    // ZeRO stage 1 sums the gradients whole over dp (an all-reduce) before
    // each rank takes its slice; stage 2 and up may reduce-scatter them.
    if (options.zeroStage == 1)
      if (std::optional<unsigned> dp = mesh.axis(rt::kDataAxis))
        for (auto [position, operand] : llvm::enumerate(op->getOperands()))
          if (isGradientRead(operand, op) &&
              operandSharding(choices.rule, strategy, position).splitsOver(*dp))
            return false;
    return !tp || !(isNorm || feedsNorm) || betweenBlocks(strategy);
  };
  std::function<bool(const Strategy &)> withBatch = [&](const Strategy &s) {
    return policy(s, true);
  };
  std::function<bool(const Strategy &)> withoutBatch = [&](const Strategy &s) {
    return policy(s, false);
  };
  if (options.applyPolicies) {
    limits.accept = withBatch;
    if (batch.any())
      choices.strategies = enumerateStrategies(choices.rule, mesh, limits);
    if (choices.strategies.empty()) {
      limits.accept = withoutBatch;
      choices.strategies = enumerateStrategies(choices.rule, mesh, limits);
    }
  }
  if (choices.strategies.empty()) {
    // Too small to split as the policies want (a sequence shorter than tp):
    // any valid split.
    limits.accept = nullptr;
    choices.strategies = enumerateStrategies(choices.rule, mesh, limits);
  }
  if (choices.strategies.empty() && limits.mustSplitVectors) {
    // ZeRO's slice does not fit what tp left of a weight (a dim dp does not
    // divide further): the dp ranks update it whole.
    limits.axisMustSplitWeights.reset(*mesh.axis(rt::kDataAxis));
    limits.mustSplitVectors = false;
    choices.strategies = enumerateStrategies(choices.rule, mesh, limits);
  }
  labelBatch(op, choices.rule, batch);
  if (options.followAnnotations)
    keepAnnotatedStrategies(op, choices);
  if (choices.strategies.empty()) {
    // The axis whose policy splits weights (tp, or ep for routed experts)
    // is the one that found no dim to split.
    int mustSplit = limits.axisMustSplitWeights.find_first();
    for (unsigned operand : limits.weightOperands.set_bits()) {
      auto type = tensorType(op->getOperand(operand));
      auto weight = op->getOperand(operand).getDefiningOp<graph::WeightOp>();
      if (type.getRank() >= 2 && mustSplit >= 0)
        return op->emitOpError() << "cannot split the weight '" << weight.getName() << "' "
                                 << shapeText(type.getShape()) << " over " << mesh.names[mustSplit]
                                 << "=" << mesh.sizes[mustSplit]
                                 << ": no dim it shares with the op is "
                                 << "divisible by " << mesh.sizes[mustSplit];
    }
    return op->emitOpError() << "has no valid sharding on the mesh (" << mesh.describe() << ")";
  }
  for (const Strategy &strategy : choices.strategies) {
    choices.results.emplace_back();
    choices.operands.emplace_back();
    int64_t localBytes = 0;
    for (auto [position, result] : llvm::enumerate(op->getResults())) {
      choices.results.back().push_back(resultSharding(choices.rule, strategy, position));
      localBytes +=
          tensorBytes(choices.results.back().back().localShape(tensorType(result).getShape(), mesh),
                      tensorType(result).getElementType());
    }
    for (auto [position, operand] : llvm::enumerate(op->getOperands())) {
      choices.operands.back().push_back(operandSharding(choices.rule, strategy, position));
      localBytes += tensorBytes(
          choices.operands.back().back().localShape(tensorType(operand).getShape(), mesh),
          tensorType(operand).getElementType());
    }
    SmallVector<int64_t> localResult;
    if (op->getNumResults() > 0)
      localResult = choices.results.back()[0].localShape(
          tensorType(op->getResult(0)).getShape(), mesh);
    choices.computeSeconds.push_back(
        opSeconds(op, strategy.shards(mesh), localBytes, localResult, options.device) +
        exchangeSeconds(op, strategy, choices.operands.back()));
  }
  index[op] = ops.size();
  ops.push_back(std::move(choices));
  return success();
}

bool ShardingProblem::isTrainingStep(func::FuncOp function) {
  auto module = function->getParentOfType<ModuleOp>();
  return module && module->hasAttr(graph::kTrainingAttrName);
}

LogicalResult ShardingProblem::build() {
  for (BlockArgument argument : function.getArguments())
    if (auto type = dyn_cast<RankedTensorType>(argument.getType());
        type && type.getRank() >= 1 && type.getDimSize(0) > 1) {
      batchDims[argument] = llvm::SmallBitVector(type.getRank());
      batchDims[argument].set(0);
    }
  // OpChoices' SmallVectors move without noexcept, so a growing vector
  // would copy every op's choices: room for all of them first.
  ops.reserve(llvm::count_if(function.getBody().front(),
                             [](Operation &op) { return takesPart(&op); }));
  for (Operation &op : function.getBody().front()) {
    if (!takesPart(&op))
      continue;
    if (!hasOnlyTensors(&op))
      return op.emitOpError() << "cannot be sharded: it takes or makes a value that is not a "
                                 "ranked tensor";
    if (failed(addOp(&op)))
      return failure();
  }
  return success();
}

/// A hash of `sharding` (FNV-1a over its axes, a marker between dims).
static uint64_t fingerprintOf(const ValueSharding &sharding) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  auto mix = [&](uint64_t word) { hash = (hash ^ word) * 0x100000001b3ULL; };
  for (const AxisList &axes : sharding.dims) {
    for (unsigned axis : axes)
      mix(axis);
    mix(~0ULL);
  }
  for (unsigned axis : sharding.partial)
    mix(axis + 0x100);
  return hash;
}

double ShardingProblem::reshardSeconds(Value value, const ValueSharding &from,
                                       const ValueSharding &to, bool forCaller) {
  if (from == to || sourceKind(value) == SourceKind::Weight)
    return 0;
  RankedTensorType type = tensorType(value);
  std::optional<unsigned> microbatches = mesh.axis(rt::kMicroBatchAxis);
  if (forCaller && microbatches) {
    ValueSharding pieces = from;
    SmallVector<int64_t> shape(type.getShape());
    dropMicrobatchAxis(pieces, shape, *microbatches, mesh.sizes[*microbatches]);
    return stepsSeconds(planReshard(pieces, to, shape, mesh), type.getElementType());
  }
  uint64_t fingerprint = fingerprintOf(from) * 0x9e3779b97f4a7c15ULL ^ fingerprintOf(to);
  auto &cache = priced[{type, fingerprint}];
  for (const PricedReshard &cached : cache)
    if (cached.from == from && cached.to == to)
      return cached.seconds;
  double seconds =
      stepsSeconds(planReshard(from, to, type.getShape(), mesh), type.getElementType());
  cache.push_back({from, to, seconds});
  return seconds;
}

double ShardingProblem::stepsSeconds(const std::optional<SmallVector<CollectiveStep, 4>> &steps,
                                     Type elementType) const {
  if (!steps)
    return kInfinity;
  std::optional<unsigned> microbatches = mesh.axis(rt::kMicroBatchAxis);
  double seconds = 0;
  int64_t elementBytes = graph::elementByteWidth(elementType);
  for (const CollectiveStep &step : *steps) {
    if (!microbatches || step.kind == CollectiveKind::AllSlice ||
        !llvm::is_contained(step.axes, *microbatches)) {
      seconds += collectiveSeconds(step, elementBytes, mesh, options.device);
      continue;
    }
    // Micro-batches are moments: they can only be summed, into a buffer
    // each run adds its piece to (read and written once per micro-batch),
    // and what the sum spans on the devices is an all-reduce over the rest.
    if (step.kind != CollectiveKind::AllReduce || !accumulatesMicrobatches)
      return kInfinity;
    CollectiveStep rest = step;
    llvm::erase(rest.axes, *microbatches);
    if (!rest.axes.empty())
      seconds += collectiveSeconds(rest, elementBytes, mesh, options.device);
    seconds +=
        2 * double(collectivePayloadBytes(step, elementBytes)) / options.device.memoryBandwidth;
  }
  return seconds;
}

double ShardingProblem::runTimeReshardSeconds(Value value, const ValueSharding &from,
                                              const ValueSharding &to) const {
  if (from == to)
    return 0;
  RankedTensorType type = tensorType(value);
  return stepsSeconds(planReshard(from, to, type.getShape(), mesh), type.getElementType());
}

bool ShardingProblem::canReshard(Value value, const ValueSharding &from,
                                 const ValueSharding &to) const {
  return from == to || sourceKind(value) == SourceKind::Weight ||
         planReshard(from, to, tensorType(value).getShape(), mesh).has_value();
}

} // namespace shardc::sharding
