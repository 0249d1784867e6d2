//===- RoutedExperts.h - the pieces of a routed MoE block --------*- C++ -*-===//
//
// The raising of routed experts (RaiseRoutedExperts.cpp) finds, however the
// exporter spelled the routing, the tokens, the router's choices and gates,
// and the experts' MLP; each spelling has its matcher (RoutedExperts*.cpp).
// graph.moe takes the experts' weights stacked along a leading expert dim.
// Stacking is free: a graph.weight with part_offsets names the experts'
// bytes where they are, and an exporter's own stacked weight is taken as is.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_GRAPH_ROUTEDEXPERTS_H
#define SHARDC_PASSES_GRAPH_ROUTEDEXPERTS_H

#include "dialects/Graph/GraphOps.h"
#include "passes/Graph/Matchers.h"
#include "passes/Graph/RowOrigins.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace shardc::graph {

/// A weight whose bytes are one plain range of its file, as imported; null
/// otherwise (graph.moe's weights are built from such ones).
WeightOp plainWeight(mlir::Value value);

/// The activation `op` applies, if it is one an expert may use.
std::optional<llvm::StringRef> activationOf(mlir::Operation *op);

/// Where each element of `value` is in the router's indices, when `value`
/// views them: through ops that move rows, and the wrap-around of negative
/// indices, where(i < 0, i + E, i), which top-k indices (never negative) pass
/// unchanged. The source is a graph.topk's indices along its last axis.
std::optional<RowOrigins> routerEntries(mlir::Value value);

/// Whether `entries` names each of the `count` router entries once.
bool coversEachOnce(llvm::ArrayRef<int64_t> entries, int64_t count);

/// down(act(x W_gate) * (x W_up)), or down(act(x W_up)) without a gate.
struct ExpertMlp {
  mlir::Value input;
  /// (gate, up, down) or (up, down): graph.weight results.
  llvm::SmallVector<mlir::Value, 3> weights;
  llvm::StringRef activation; ///< silu, gelu, gelu_tanh or relu
  bool transposed = false;    ///< every weight "out x in"

  /// Whether `other` is the same MLP with other weights (it can be stacked
  /// with this one), whatever its input.
  bool sameShapeAs(const ExpertMlp &other) const;
};

/// The expert MLP whose output is `output`: linears without bias whose
/// weights are plain graph.weight ops of one file.
std::optional<ExpertMlp> matchExpertMlp(mlir::Value output);

/// One projection's weights over all the experts, as graph.moe takes them:
/// either every expert's own plain weight (`parts`, in expert order: stacked
/// where they lie, with part_offsets), or one plain weight that already
/// stacks them along its leading dim (a single rank-3 part), of which
/// graph.moe takes the box [begin, end) along `boxDim` when it fuses two
/// projections (gate and up).
struct StackedWeight {
  llvm::SmallVector<mlir::Value> parts;
  int64_t boxDim = -1, boxBegin = 0, boxEnd = 0;
};

/// The experts' MLP with its weights stacked over the experts.
struct StackedMlp {
  llvm::SmallVector<StackedWeight, 3> weights; ///< (gate, up, down) or (up, down)
  llvm::StringRef activation;
  bool transposed = false; ///< every weight "out x in"
};

/// `experts` (in expert order) as one stacked MLP; nullopt unless all are
/// sameShapeAs the first.
std::optional<StackedMlp> stackExperts(llvm::ArrayRef<ExpertMlp> experts);

/// A routed MoE block as one spelling's matcher found it.
struct RoutedExperts {
  /// The tokens: [T, H], or a view whose rows are the T tokens in order.
  mlir::Value input;
  mlir::Value indices; ///< [T, k], from graph.topk
  /// [T, k], or a view of it whose elements are in that order.
  mlir::Value gates;
  StackedMlp experts;
  /// Values the block adds to the experts' sum (a residual joining inside
  /// it, a shared expert).
  llvm::SmallVector<mlir::Value> addends;
};

/// The block whose result is `output` when it scales each expert's output by
/// its column of a dense [T, E] gate table, the gates scattered to the chosen
/// experts' columns (zeros elsewhere), and sums them.
std::optional<RoutedExperts> matchDenseGateTable(mlir::Value output, WeightValues &weights);

/// The block whose result is `output` when, per expert, it runs the expert
/// on every router entry's token (gathered by constant token lists), weights
/// each by the entry's gate, keeps the entries that chose the expert (a
/// mask from the router's indices) and adds them into their tokens' rows
/// (scatter_elements); transformers 4.x's loop over experts once its NonZero
/// selections are densified (DensifySelections.cpp).
std::optional<RoutedExperts> matchScatteredEntries(mlir::Value output);

/// The block whose result is `output` when it gathers each router entry's
/// expert weights from stacked [E, ...] weights by the router's indices
/// (gather_nd), runs the entry's token through them with batched matmuls,
/// weights it by the entry's gate and sums each token's entries;
/// transformers 5's "batched_mm" experts.
std::optional<RoutedExperts> matchBatchedMatmul(mlir::Value output);

/// graph.moe for `found`: its weights stacked (or boxed), its input and
/// gates viewed as [T, H] and [T, k] where they are not. Null when the
/// operands do not fit graph.moe.
mlir::Value buildMoe(mlir::OpBuilder &builder, mlir::Location location, const RoutedExperts &found);

} // namespace shardc::graph

#endif
