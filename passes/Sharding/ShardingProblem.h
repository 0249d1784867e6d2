//===- ShardingProblem.h - the choices and costs of one program -*- C++ -*-===//
//
// For every op of a function: its sharding rule, its valid strategies under
// the options (which axes may or must split weights, --sp), the sharding
// each strategy gives every result and asks of every operand, and what
// those cost: compute by the roofline, each needed reshard by the
// collectives planReshard would emit. The search (AutoShard) minimizes over
// all ops at once; propagation (PropagateSharding) picks op by op.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_SHARDINGPROBLEM_H
#define SHARDC_PASSES_SHARDING_SHARDINGPROBLEM_H

#include "passes/Sharding/CostModel.h"
#include "passes/Sharding/Strategy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

namespace shardc::sharding {

struct ShardingOptions {
  DeviceModel device;
  /// The search's policies: dp never splits weights, tp splits every linear
  /// layer's, and the activations between blocks are whole over tp (or, with
  /// sequenceParallel, split along the sequence). Propagation follows
  /// annotations instead and leaves them off.
  bool applyPolicies = true;
  bool sequenceParallel = false;
  /// tp must also split embedding tables (gathers from weights): when
  /// replicating them does not fit.
  bool splitEmbeddings = false;
  /// ZeRO stage of a training step (docs/training.md, "ZeRO"): 1 and up,
  /// the optimizer's ops split what they read of the trained weights and
  /// states over dp; 1 takes the gradients whole (all-reduced); 3 also
  /// stores the weights split over dp.
  unsigned zeroStage = 0;
  /// Propagation: an op annotated with its shardings (by the search) keeps
  /// only the strategies that give them, when any does; propagation picks
  /// among those alone (enumerating every other costs seconds on a large
  /// training step).
  bool followAnnotations = false;
};

/// Where an operand comes from, as far as resharding it costs.
enum class SourceKind {
  Weight,   ///< cut at compile time into any sharding, partial sums included
  Complete, ///< a constant or a program input: every device holds all of it
  Op        ///< computed by an op of the program
};

struct OpChoices {
  mlir::Operation *op;
  OpShardingRule rule;
  llvm::SmallVector<Strategy> strategies;
  /// [strategy][result] and [strategy][operand] shardings.
  llvm::SmallVector<llvm::SmallVector<ValueSharding, 1>> results, operands;
  /// [strategy] compute seconds.
  llvm::SmallVector<double> computeSeconds;
};

class ShardingProblem {
public:
  ShardingProblem(mlir::func::FuncOp function, MeshShape mesh, ShardingOptions options)
      : function(function), mesh(std::move(mesh)), options(std::move(options)),
        accumulatesMicrobatches(isTrainingStep(function)) {}

  /// Enumerates every op's strategies; an op left without any is an error
  /// at the op, naming the numbers.
  mlir::LogicalResult build();

  static SourceKind sourceKind(mlir::Value value);
  /// The ops that take part (not weights, constants or the return).
  static bool takesPart(mlir::Operation *op);

  llvm::ArrayRef<OpChoices> choices() const { return ops; }
  /// Index of `op` in choices(), if it takes part.
  std::optional<unsigned> indexOf(mlir::Operation *op) const;

  /// Seconds to reshard `value` (global type) from `from` to `to`; infinity
  /// when impossible. Free for weights. Communication over the micro-batch
  /// axis is impossible (its coordinates are moments, not devices), except
  /// in what the program returns (`forCaller`): the runtime concatenates
  /// the micro-batches' pieces, so only the other axes are priced.
  double reshardSeconds(mlir::Value value, const ValueSharding &from, const ValueSharding &to,
                        bool forCaller = false);
  /// Whether a reshard from `from` to `to` exists at all (a partial sum
  /// cannot be made from a whole value).
  bool canReshard(mlir::Value value, const ValueSharding &from, const ValueSharding &to) const;

  /// Seconds to move a value held as `from` to `to` at run time, whatever
  /// made it (a trained weight's storage included); infinity when impossible.
  double runTimeReshardSeconds(mlir::Value value, const ValueSharding &from,
                               const ValueSharding &to) const;

  const MeshShape &meshShape() const { return mesh; }

private:
  static bool isTrainingStep(mlir::func::FuncOp function);

  /// The collectives' time; infinity when there are none (impossible) or
  /// one communicates over the micro-batch axis.
  double stepsSeconds(const std::optional<llvm::SmallVector<CollectiveStep, 4>> &steps,
                      mlir::Type elementType) const;
  mlir::LogicalResult addOp(mlir::Operation *op);
  void keepAnnotatedStrategies(mlir::Operation *op, OpChoices &choices) const;
  /// The all-to-alls routed experts run inside the op on the strategy's
  /// routed axes (dispatch and combine); 0 for any other op.
  double exchangeSeconds(mlir::Operation *op, const Strategy &strategy,
                         llvm::ArrayRef<ValueSharding> operands) const;
  StrategyLimits limitsFor(mlir::Operation *op);
  /// ZeRO: `op` is an optimizer op whose trained weights and states (each
  /// with a dim dp divides) each dp rank reads and updates a slice of.
  bool updatesSliceOverDp(mlir::Operation *op) const;
  /// The factors of `op` that carry the batch, and the result dims that do.
  llvm::SmallBitVector batchFactors(mlir::Operation *op, const OpShardingRule &rule);
  void labelBatch(mlir::Operation *op, const OpShardingRule &rule,
                  const llvm::SmallBitVector &factors);

  mlir::func::FuncOp function;
  MeshShape mesh;
  ShardingOptions options;
  /// A training step: a sum over the micro-batch axis (an all-reduce over
  /// mb) is an accumulation into a buffer across the micro-batches' runs
  /// (shardc-accumulate-microbatches), not an exchange between devices.
  bool accumulatesMicrobatches;
  std::vector<OpChoices> ops;
  llvm::DenseMap<mlir::Operation *, unsigned> index;
  /// Dims that carry the batch: dim 0 of the inputs, followed through rules.
  llvm::DenseMap<mlir::Value, llvm::SmallBitVector> batchDims;
  /// A reshard cost already priced.
  struct PricedReshard {
    ValueSharding from, to;
    double seconds;
  };
  /// Reshard costs already priced, by the value's type (shape and element
  /// type: all a reshard's price depends on) and a fingerprint of (from, to);
  /// the list holds the pairs whose fingerprints collide. Keyed by type, a
  /// model's repeated layers price each of their reshards once, not once per
  /// layer (millions of lookups on a GPT-3-sized training step).
  llvm::DenseMap<std::pair<mlir::Type, uint64_t>, llvm::SmallVector<PricedReshard, 1>> priced;
};

} // namespace shardc::sharding

#endif
