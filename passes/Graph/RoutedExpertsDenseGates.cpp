//===- RoutedExpertsDenseGates.cpp - MoE spelled with a dense gate table --===//
//
// A spelling that runs every expert on every token and weights each by a
// dense gate table: table = scatter(zeros [T, E], indices, gates) along the
// experts, y = sum over e of table[:, e] * expert_e(x). An expert's column
// is zero where the token did not choose it, so the sum is graph.moe's.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/RoutedExperts.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace shardc::graph {
namespace {

/// The expert whose column of a [T, E] table `column` is: slice [:, e:e+1].
std::optional<int64_t> columnOf(SliceOp column, Value table) {
  auto type = cast<RankedTensorType>(table.getType());
  if (column.getInput() != table || type.getRank() != 2)
    return std::nullopt;
  ArrayRef<int64_t> starts = column.getStarts(), ends = column.getEnds(),
                    steps = column.getSteps();
  if (starts[0] != 0 || ends[0] != type.getDimSize(0) || steps[0] != 1 || steps[1] != 1 ||
      ends[1] != starts[1] + 1)
    return std::nullopt;
  return starts[1];
}

} // namespace

/// The largest gate table whose values are read to see that it starts from zeros.
constexpr int64_t kMaxInspectedTableElements = int64_t(1) << 24;

std::optional<RoutedExperts> matchDenseGateTable(Value output, WeightValues &weights) {
  SmallVector<Value> terms;
  sumTerms(output, terms);
  ScatterElementsOp table;
  llvm::DenseMap<int64_t, ExpertMlp> byExpert;
  SmallVector<Value> addends;
  for (Value term : terms) {
    auto product = producer<MulOp>(term);
    bool matched = false;
    for (unsigned scale : {0u, 1u}) {
      if (!product)
        break;
      auto column = producer<SliceOp>(product->getOperand(scale));
      auto scatter = column ? producer<ScatterElementsOp>(column.getInput()) : nullptr;
      std::optional<ExpertMlp> expert = matchExpertMlp(product->getOperand(1 - scale));
      if (!scatter || !expert || (table && scatter != table))
        continue;
      std::optional<int64_t> index = columnOf(column, scatter.getResult());
      if (!index || !byExpert.try_emplace(*index, *expert).second)
        return std::nullopt;
      table = scatter;
      matched = true;
      break;
    }
    if (!matched)
      addends.push_back(term);
  }
  // The table holds the gates at the chosen experts and zeros elsewhere.
  if (!table || table.getAxis() != 1 || table.getReduction() != ScatterReduction::none ||
      !isAllZeros(table.getData(), weights, kMaxInspectedTableElements))
    return std::nullopt;
  auto topk = producer<TopKOp>(table.getIndices());
  if (!topk || table.getIndices() != topk.getIndices() ||
      int64_t(topk.getAxis()) != topk.getIndices().getType().getRank() - 1)
    return std::nullopt;
  int64_t experts = cast<RankedTensorType>(table.getType()).getDimSize(1);
  SmallVector<ExpertMlp> ordered;
  for (int64_t expert = 0; expert < experts; ++expert) {
    auto mlp = byExpert.find(expert);
    // Every expert runs on the same tokens, each row one token.
    if (mlp == byExpert.end() || mlp->second.input != byExpert.begin()->second.input)
      return std::nullopt;
    ordered.push_back(mlp->second);
  }
  std::optional<StackedMlp> stacked = stackExperts(ordered);
  if (!stacked)
    return std::nullopt;
  RoutedExperts found{ordered.front().input, table.getIndices(), table.getUpdates(), *stacked,
                      addends};
  return found;
}

} // namespace shardc::graph
