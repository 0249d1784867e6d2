//===- Strategy.cpp - enumerate strategies, project them on tensors -------===//
#include "passes/Sharding/Strategy.h"

#include "llvm/ADT/STLExtras.h"

namespace shardc::sharding {

int64_t Strategy::shards(const MeshShape &mesh) const {
  int64_t shards = 1;
  for (auto [axis, factor] : llvm::enumerate(axisFactor))
    if (factor >= 0 || factor == kRouted)
      shards *= mesh.sizes[axis];
  return shards;
}

namespace {

AxisList axesOf(const Strategy &strategy, int factor) {
  AxisList axes;
  for (auto [axis, assigned] : llvm::enumerate(strategy.axisFactor))
    if (assigned == factor)
      axes.push_back(axis);
  return axes;
}

/// Whether `factor` is split by the axes a routed strategy assigns.
bool isRouted(const OpShardingRule &rule, unsigned factor) {
  return rule.routed && (rule.routed->first == factor || rule.routed->second == factor);
}

/// The axes that split `factor`: its own, and the routed ones for the
/// tokens and experts of routed experts.
AxisList splittingAxes(const OpShardingRule &rule, const Strategy &strategy, unsigned factor) {
  AxisList axes;
  for (auto [axis, assigned] : llvm::enumerate(strategy.axisFactor))
    if (assigned == int(factor) || (assigned == Strategy::kRouted && isRouted(rule, factor)))
      axes.push_back(axis);
  return axes;
}

ValueSharding project(const OpShardingRule &rule, const TensorFactors &tensor,
                      const Strategy &strategy) {
  ValueSharding sharding = ValueSharding::replicated(tensor.size());
  for (auto [dim, factors] : llvm::enumerate(tensor))
    for (unsigned factor : factors) {
      AxisList axes = splittingAxes(rule, strategy, factor);
      sharding.dims[dim].append(axes.begin(), axes.end());
    }
  return sharding;
}

/// Splits must be contiguous blocks of each dim: inside a dim, a factor may
/// be split only if every more major factor is already cut to one element.
bool isContiguous(const TensorFactors &tensor, const OpShardingRule &rule,
                  llvm::ArrayRef<int64_t> factorShards) {
  for (const DimFactors &factors : tensor) {
    bool wholeBefore = false;
    for (unsigned factor : factors) {
      if (factorShards[factor] > 1 && wholeBefore)
        return false;
      if (rule.factors[factor].size / factorShards[factor] > 1)
        wholeBefore = true;
    }
  }
  return true;
}

bool appearsIn(const TensorFactors &tensor, int factor) {
  return llvm::any_of(
      tensor, [&](const DimFactors &factors) { return llvm::is_contained(factors, factor); });
}

/// Whether the axis assigned `choice` splits `tensor`.
bool splits(const OpShardingRule &rule, const TensorFactors &tensor, int choice) {
  if (choice == Strategy::kRouted)
    return appearsIn(tensor, rule.routed->first) || appearsIn(tensor, rule.routed->second);
  return choice >= 0 && appearsIn(tensor, choice);
}

bool isValid(const OpShardingRule &rule, const MeshShape &mesh, const StrategyLimits &limits,
             const Strategy &strategy) {
  llvm::SmallVector<int64_t, 8> factorShards(rule.factors.size(), 1);
  bool routes = false;
  for (auto [axis, factor] : llvm::enumerate(strategy.axisFactor)) {
    if (factor == Strategy::kPartial && rule.linearOperands.empty())
      return false;
    if (factor == Strategy::kRouted) {
      factorShards[rule.routed->first] *= mesh.sizes[axis];
      factorShards[rule.routed->second] *= mesh.sizes[axis];
      routes = true;
    }
    if (factor < 0)
      continue;
    if (rule.factors[factor].kind == FactorKind::Replicated)
      return false;
    factorShards[factor] *= mesh.sizes[axis];
  }
  // Entries travel over the routed axes only: experts split over other
  // axes too would leave partial sums the exchange cannot carry.
  if (routes && llvm::is_contained(strategy.axisFactor, int(rule.routed->second)))
    return false;
  for (auto [factor, shards] : llvm::enumerate(factorShards))
    if (rule.factors[factor].size % shards != 0)
      return false;
  for (const TensorFactors &tensor : llvm::concat<const TensorFactors>(rule.operands, rule.results))
    if (!isContiguous(tensor, rule, factorShards))
      return false;
  for (unsigned operand : limits.weightOperands.set_bits()) {
    const TensorFactors &tensor = rule.operands[operand];
    for (auto [axis, factor] : llvm::enumerate(strategy.axisFactor)) {
      bool splitsWeight = splits(rule, tensor, factor);
      if (splitsWeight && !limits.axisMaySplitWeights.test(axis))
        return false;
      if (!splitsWeight && limits.axisMustSplitWeights.test(axis) &&
          (tensor.size() >= 2 || (limits.mustSplitVectors && tensor.size() == 1)))
        return false;
    }
  }
  return !limits.accept || limits.accept(strategy);
}

} // namespace

llvm::SmallVector<Strategy> enumerateStrategies(const OpShardingRule &rule, const MeshShape &mesh,
                                                const StrategyLimits &limits) {
  llvm::SmallVector<int, 8> choices = {Strategy::kNone};
  for (unsigned factor = 0; factor < rule.factors.size(); ++factor)
    if (rule.factors[factor].kind != FactorKind::Replicated && rule.factors[factor].size > 1)
      choices.push_back(factor);
  if (!rule.linearOperands.empty())
    choices.push_back(Strategy::kPartial);
  if (rule.routed)
    choices.push_back(Strategy::kRouted);

  llvm::SmallVector<Strategy> strategies;
  Strategy current;
  current.axisFactor.assign(mesh.numAxes(), Strategy::kNone);
  std::function<void(unsigned)> choose = [&](unsigned axis) {
    if (axis == mesh.numAxes()) {
      if (isValid(rule, mesh, limits, current))
        strategies.push_back(current);
      return;
    }
    for (int choice : choices) {
      current.axisFactor[axis] = choice;
      choose(axis + 1);
    }
    current.axisFactor[axis] = Strategy::kNone;
  };
  choose(0);
  return strategies;
}

ValueSharding resultSharding(const OpShardingRule &rule, const Strategy &strategy,
                             unsigned result) {
  ValueSharding sharding = project(rule, rule.results[result], strategy);
  sharding.partial = axesOf(strategy, Strategy::kPartial);
  for (auto [axis, factor] : llvm::enumerate(strategy.axisFactor))
    if (factor >= 0 && rule.factors[factor].kind == FactorKind::Reduction)
      sharding.partial.push_back(axis);
  llvm::sort(sharding.partial);
  return sharding;
}

ValueSharding operandSharding(const OpShardingRule &rule, const Strategy &strategy,
                              unsigned operand) {
  ValueSharding sharding = project(rule, rule.operands[operand], strategy);
  if (llvm::is_contained(rule.linearOperands, operand))
    sharding.partial = axesOf(strategy, Strategy::kPartial);
  for (auto [partialOperand, factor] : rule.partialOperands)
    if (partialOperand == operand) {
      AxisList axes = axesOf(strategy, factor);
      sharding.partial.append(axes.begin(), axes.end());
    }
  llvm::sort(sharding.partial);
  return sharding;
}

} // namespace shardc::sharding
