//===- RoutedExperts.h - the pieces of a routed MoE block --------*- C++ -*-===//
//
// The raising of routed experts (RaiseRoutedExperts.cpp) finds, however the
// exporter spelled the routing, the tokens, the router's choices and gates,
// and one MLP per expert; each spelling has its matcher (RoutedExperts*.cpp).
// graph.moe takes the experts' weights stacked along a leading expert dim.
// Stacking is free: a graph.weight with part_offsets names the experts'
// bytes where they are.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_GRAPH_ROUTEDEXPERTS_H
#define SHARDC_PASSES_GRAPH_ROUTEDEXPERTS_H

#include "dialects/Graph/GraphOps.h"
#include "passes/Graph/Matchers.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace shardc::graph {

/// down(act(x W_gate) * (x W_up)), or down(act(x W_up)) without a gate.
struct ExpertMlp {
  mlir::Value input;
  /// (gate, up, down) or (up, down): graph.weight results.
  llvm::SmallVector<mlir::Value, 3> weights;
  llvm::StringRef activation; ///< silu, gelu, gelu_tanh or relu
  bool transposed = false;    ///< every weight "out x in"

  /// Whether `other` is the same MLP with other weights (it can be stacked
  /// with this one).
  bool sameShapeAs(const ExpertMlp &other) const;
};

/// The expert MLP whose output is `output`: linears without bias whose
/// weights are plain graph.weight ops of one file.
std::optional<ExpertMlp> matchExpertMlp(mlir::Value output);

/// A routed MoE block as one spelling's matcher found it.
struct RoutedExperts {
  mlir::Value input;   ///< the tokens [T, H]
  mlir::Value indices; ///< [T, k], from graph.topk
  mlir::Value gates;   ///< [T, k]
  llvm::SmallVector<ExpertMlp> experts; ///< in expert order, all sameShapeAs the first
  /// Values the block adds to the experts' sum (a residual joining inside it).
  llvm::SmallVector<mlir::Value> addends;
};

/// The block whose result is `output` when it scales each expert's output by
/// its column of a dense [T, E] gate table, the gates scattered to the chosen
/// experts' columns (zeros elsewhere), and sums them.
std::optional<RoutedExperts> matchDenseGateTable(mlir::Value output, WeightValues &weights);

/// graph.moe over `experts` (in expert order, all sameShapeAs the first):
/// their weights stacked, the tokens `input` [T, H], the router's `indices`
/// and `gates` [T, k]. Null when the operands do not fit graph.moe.
mlir::Value buildMoe(mlir::OpBuilder &builder, mlir::Location location, mlir::Value input,
                     mlir::Value indices, mlir::Value gates, llvm::ArrayRef<ExpertMlp> experts);

} // namespace shardc::graph

#endif
