//===- ShardingRule.h - how an op's dims may be split ------------*- C++ -*-===//
//
// After Shardy's OpShardingRule: every graph op is described by an
// einsum-like map from its operand and result dims to factors. A factor
// sharded over a mesh axis splits every dim it appears in; a factor that
// appears only in operands (a contraction) leaves a pending partial sum in
// the results; a factor the op must see whole (a softmax axis, a normalized
// dim, a gather axis) is Replicated. A dim may hold several factors, major
// to minor (a reshape of [b, s, h*d] to [b, s, h, d] maps dim 2 to the
// factors h and d), so a split travels through reshapes and transposes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_SHARDINGRULE_H
#define SHARDC_PASSES_SHARDING_SHARDINGRULE_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace shardc::sharding {

enum class FactorKind {
  Parallel,  ///< in results and operands: a split divides the work, no communication
  Reduction, ///< in operands only, summed over: a split leaves partial sums
  Replicated ///< the op needs it whole
};

struct Factor {
  int64_t size;
  FactorKind kind;
};

/// A tensor dim's factors, major to minor; empty for a broadcast (size 1) dim.
using DimFactors = llvm::SmallVector<unsigned, 2>;
using TensorFactors = llvm::SmallVector<DimFactors, 4>;

struct OpShardingRule {
  llvm::SmallVector<Factor, 8> factors;
  llvm::SmallVector<TensorFactors, 4> operands, results;
  /// (operand, factor): the operand must be a partial sum over the axes the
  /// factor is split over (the bias of a linear layer whose contraction is
  /// split: added once, on the group's first device).
  llvm::SmallVector<std::pair<unsigned, unsigned>, 1> partialOperands;
  /// The operands the op is linear in, jointly: partial sums in all of them,
  /// with the other operands whole, give partial sums (add/sub: every
  /// operand; a broadcast scale: the scaled value; a select against zero:
  /// the other branch; a scatter: data and updates, or only the updates when
  /// the data is zeros). Empty: partial sums must be completed first.
  llvm::SmallVector<unsigned, 2> linearOperands;
  /// (tokens, experts) of routed experts (graph.moe): axes that split the
  /// tokens also split the experts, the op moving each token's entries to
  /// its experts' devices and back itself (an all-to-all each way). A
  /// strategy splits one of the two factors or neither, never both.
  std::optional<std::pair<unsigned, unsigned>> routed;

  unsigned addFactor(int64_t size, FactorKind kind) {
    factors.push_back({size, kind});
    return factors.size() - 1;
  }
  /// "([b, s, k], [k, n]) -> ([b, s, n]) with k reduction", for tests.
  std::string describe() const;
};

/// Whether every operand and result of `op` is a ranked tensor (the ops
/// rules are for).
bool hasOnlyTensors(mlir::Operation *op);

/// The rule of `op`; an op without a dedicated rule gets one that keeps all
/// of its dims whole (correct, if not fast).
OpShardingRule getShardingRule(mlir::Operation *op);

} // namespace shardc::sharding

#endif
