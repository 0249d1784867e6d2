//===- Strategy.h - one way to run an op on the mesh ------------*- C++ -*-===//
//
// A strategy sends each mesh axis to one factor of the op's sharding rule
// (or to none: the op is repeated along that axis). It fixes the sharding of
// every result and the sharding every operand must arrive in; the search
// picks one strategy per op, the propagation pass derives them for ops the
// search did not annotate, and both use this one projection.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_STRATEGY_H
#define SHARDC_PASSES_SHARDING_STRATEGY_H

#include "passes/Sharding/ShardingRule.h"
#include "passes/Sharding/ValueSharding.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace shardc::sharding {

struct Strategy {
  /// Not split along the axis.
  static constexpr int kNone = -1;
  /// The rule's linear operands and the results are partial sums along the axis.
  static constexpr int kPartial = -2;
  /// Routed experts (OpShardingRule::routed): the axis splits both the
  /// tokens and the experts, and the op exchanges entries over it.
  static constexpr int kRouted = -3;
  /// Per mesh axis: a factor index, kNone, kPartial or kRouted.
  llvm::SmallVector<int, 4> axisFactor;

  bool operator==(const Strategy &other) const { return axisFactor == other.axisFactor; }
  /// How many pieces the op's work is cut into.
  int64_t shards(const MeshShape &mesh) const;
};

/// What the op's context allows; filled by the pass from the IR.
struct StrategyLimits {
  /// Per operand: it is a weight (cut at compile time).
  llvm::BitVector weightOperands;
  /// Per mesh axis: may split weights (tp, ep) / must split the weight of a
  /// linear layer or matmul (tp).
  llvm::BitVector axisMaySplitWeights, axisMustSplitWeights;
  /// The must-split axes split weights of one dim too (ZeRO's update splits
  /// biases and norm scales; tp leaves them whole).
  bool mustSplitVectors = false;
  /// Extra per-op condition (e.g. --sp: norms split along the sequence).
  llvm::function_ref<bool(const Strategy &)> accept;
};

/// Every valid strategy of an op with `rule` on `mesh`, replicated first.
llvm::SmallVector<Strategy> enumerateStrategies(const OpShardingRule &rule, const MeshShape &mesh,
                                                const StrategyLimits &limits);

ValueSharding resultSharding(const OpShardingRule &rule, const Strategy &strategy, unsigned result);
ValueSharding operandSharding(const OpShardingRule &rule, const Strategy &strategy,
                              unsigned operand);

} // namespace shardc::sharding

#endif
