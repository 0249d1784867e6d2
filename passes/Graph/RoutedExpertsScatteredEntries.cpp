//===- RoutedExpertsScatteredEntries.cpp - MoE as a loop over experts -----===//
//
// transformers 4.x runs each expert on the tokens that chose it (NonZero of
// its one-hot mask) and adds the weighted outputs into those tokens' rows
// (index_add). DensifySelections.cpp makes each selection every router entry
// (slot, token): constant index lists pick each entry's token and gate, a
// where keeps the entries whose mask is set, and scatter_elements adds them
// into their rows. Per expert e the sum gets, for every entry n,
//
//   y[s(n)] += [indices[m(n)] == e] * gates[g(n)] * expert_e(x[x(n)])
//
// which is graph.moe's term for entry (t, j) when m(n) = g(n) = (t, j) and
// x(n) = s(n) = t, and n runs over every (t, j) once: all of that is read off
// the constants and checked, entry by entry.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/TypeUtils.h"
#include "passes/Graph/Matchers.h"
#include "passes/Graph/RoutedExperts.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace shardc::graph {
namespace {

/// What one expert's scatter adds: per entry n, its row s(n), token x(n),
/// gate g(n) and mask m(n) (positions in the router's [T, k] indices), and
/// the expert the mask compares with.
struct ExpertEntries {
  ExpertMlp mlp;
  Value tokens, gates, indices;
  SmallVector<int64_t> rows, tokenRows, gateEntries, maskEntries;
  int64_t expert;
};

/// The operand a 0/1 value passes through unchanged in truth: a cast among
/// integer and boolean types, or where(p, 1, 0). Sound only when the mask
/// starts from a comparison (checked by the caller): then every value on the
/// way is 0 or 1.
Value sameTruth(Operation *op) {
  if (auto cast = dyn_cast<CastOp>(op)) {
    bool integers = getElementTypeOrSelf(cast.getInput()).isSignlessInteger() &&
                    getElementTypeOrSelf(cast.getType()).isSignlessInteger();
    return integers ? cast.getInput() : Value();
  }
  if (auto where = dyn_cast<WhereOp>(op);
      where && isSplat(where.getTrueValue(), 1.0) && isSplat(where.getFalseValue(), 0.0) &&
      shapeOf(where.getCondition()) == shapeOf(where.getResult()))
    return where.getCondition();
  return {};
}

/// The element of `operand` (broadcast to `shape`) at the flat `index` of
/// `shape`.
int64_t broadcastSource(ArrayRef<int64_t> shape, ArrayRef<int64_t> operand, int64_t index) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  int64_t lead = int64_t(shape.size() - operand.size()), flat = 0;
  for (auto [d, size] : llvm::enumerate(operand))
    flat = flat * size + (size == 1 ? 0 : coords[d + lead]);
  return flat;
}

/// Per entry of a [N, 1] mask: its position in the router's indices, when
/// every element compares an index with one constant expert; sets `expert`.
std::optional<SmallVector<int64_t>> maskEntries(Value mask, Value &indices, int64_t &expert) {
  std::optional<RowOrigins> origins = traceRows(mask, 1, sameTruth);
  auto compare = origins ? producer<CompareOp>(origins->source) : CompareOp();
  if (!compare || compare.getPredicate() != ComparePredicate::eq)
    return std::nullopt;
  ArrayRef<int64_t> shape = shapeOf(compare.getResult());
  for (auto [index, constant] : {std::pair{compare.getLhs(), compare.getRhs()},
                                 std::pair{compare.getRhs(), compare.getLhs()}}) {
    std::optional<RowOrigins> entries = routerEntries(index);
    std::optional<RowOrigins> experts = traceRows(constant, 1);
    std::optional<SmallVector<int64_t>> values =
        experts ? constantInts(experts->source) : std::nullopt;
    if (!entries || !values)
      continue;
    SmallVector<int64_t> positions;
    std::optional<int64_t> chosen;
    for (int64_t element : origins->rows) {
      int64_t value = (*values)[experts->rows[broadcastSource(shape, shapeOf(constant), element)]];
      if (chosen && *chosen != value)
        return std::nullopt;
      chosen = value;
      positions.push_back(entries->rows[broadcastSource(shape, shapeOf(index), element)]);
    }
    indices = entries->source;
    expert = *chosen;
    return positions;
  }
  return std::nullopt;
}

/// The rows a constant [N, H] scatter index sends its entries to (each row
/// of indices one value), if they are all within [0, rows).
std::optional<SmallVector<int64_t>> scatterRows(Value indices, int64_t rows) {
  std::optional<SmallVector<int64_t>> values = constantInts(indices);
  ArrayRef<int64_t> shape = shapeOf(indices);
  if (!values || shape.size() != 2)
    return std::nullopt;
  SmallVector<int64_t> targets;
  for (int64_t n = 0; n < shape[0]; ++n) {
    int64_t row = (*values)[n * shape[1]];
    if (row < 0 || row >= rows)
      return std::nullopt;
    for (int64_t h = 1; h < shape[1]; ++h)
      if ((*values)[n * shape[1] + h] != row)
        return std::nullopt;
    targets.push_back(row);
  }
  return targets;
}

/// One expert's scatter: scatter_elements(data, rows, where(mask, expert(x)
/// * gate, 0)) adding along the tokens; reads every entry's facts.
std::optional<ExpertEntries> matchScatter(ScatterElementsOp scatter) {
  ArrayRef<int64_t> shape = shapeOf(scatter.getResult());
  if (shape.size() != 2 || scatter.getAxis() != 0 ||
      scatter.getReduction() != ScatterReduction::add)
    return std::nullopt;
  auto where = producer<WhereOp>(scatter.getUpdates());
  auto product = where ? producer<MulOp>(where.getTrueValue()) : MulOp();
  if (!product || !isSplat(where.getFalseValue(), 0.0) ||
      shapeOf(where.getResult()) != shapeOf(product.getResult()))
    return std::nullopt;
  int64_t entries = shapeOf(product.getResult())[0];
  // Per entry one mask element and one gate, broadcast along the row.
  SmallVector<int64_t> perEntry = {entries, 1};
  if (shapeOf(where.getCondition()) != ArrayRef(perEntry))
    return std::nullopt;
  ExpertEntries found;
  for (unsigned gate : {0u, 1u}) {
    std::optional<ExpertMlp> mlp = matchExpertMlp(product->getOperand(1 - gate));
    Value weight = product->getOperand(gate);
    if (!mlp || shapeOf(weight) != ArrayRef(perEntry) ||
        shapeOf(product->getOperand(1 - gate)) != shapeOf(scatter.getUpdates()))
      continue;
    std::optional<RowOrigins> tokens = traceRows(mlp->input, shapeOf(mlp->input).back());
    std::optional<RowOrigins> gates = traceRows(weight, 1);
    std::optional<SmallVector<int64_t>> rows = scatterRows(scatter.getIndices(), shape[0]);
    std::optional<SmallVector<int64_t>> mask =
        maskEntries(where.getCondition(), found.indices, found.expert);
    if (!tokens || !gates || !rows || !mask)
      return std::nullopt;
    found.mlp = *mlp;
    found.tokens = tokens->source;
    found.gates = gates->source;
    found.tokenRows = tokens->rows;
    found.gateEntries = gates->rows;
    found.rows = *rows;
    found.maskEntries = *mask;
    return found;
  }
  return std::nullopt;
}

/// Whether every entry of `expert` goes back to its token's row with its own
/// gate, and the entries are the router's, each once.
bool entriesAgree(const ExpertEntries &expert, int64_t slots) {
  int64_t tokens = shapeOf(expert.indices)[0];
  size_t entries = expert.maskEntries.size();
  int64_t hidden = shapeOf(expert.mlp.input).back();
  if (!coversEachOnce(expert.maskEntries, tokens * slots) || expert.rows.size() != entries ||
      expert.tokenRows.size() != entries || expert.gateEntries.size() != entries ||
      cast<RankedTensorType>(expert.gates.getType()).getNumElements() != tokens * slots ||
      shapeOf(expert.tokens).back() != hidden ||
      cast<RankedTensorType>(expert.tokens.getType()).getNumElements() != tokens * hidden)
    return false;
  for (auto [n, entry] : llvm::enumerate(expert.maskEntries))
    if (expert.gateEntries[n] != entry || expert.tokenRows[n] != entry / slots ||
        expert.rows[n] != entry / slots)
      return false;
  return true;
}

} // namespace

std::optional<RoutedExperts> matchScatteredEntries(Value output) {
  SmallVector<Value> terms, addends;
  sumTerms(output, terms);
  SmallVector<std::optional<ExpertMlp>> byExpert;
  std::optional<ExpertEntries> first;
  // A scatter adding into data is data + its entries: data is a term too.
  while (!terms.empty()) {
    Value term = terms.pop_back_val();
    if (isSplat(term, 0.0))
      continue;
    auto scatter = producer<ScatterElementsOp>(term);
    std::optional<ExpertEntries> expert = scatter ? matchScatter(scatter) : std::nullopt;
    if (!expert) {
      addends.push_back(term);
      continue;
    }
    if (first && (expert->indices != first->indices || expert->gates != first->gates ||
                  expert->tokens != first->tokens))
      return std::nullopt;
    if (!first)
      first = expert;
    auto topk = producer<TopKOp>(expert->indices);
    int64_t experts = shapeOf(topk.getInput()).back(), slots = shapeOf(expert->indices)[1];
    byExpert.resize(experts);
    if (expert->expert < 0 || expert->expert >= experts || byExpert[expert->expert] ||
        !entriesAgree(*expert, slots))
      return std::nullopt;
    byExpert[expert->expert] = expert->mlp;
    sumTerms(scatter.getData(), terms);
  }
  if (!first)
    return std::nullopt;
  SmallVector<ExpertMlp> ordered;
  for (std::optional<ExpertMlp> &mlp : byExpert) {
    if (!mlp)
      return std::nullopt;
    ordered.push_back(*mlp);
  }
  std::optional<StackedMlp> stacked = stackExperts(ordered);
  if (!stacked)
    return std::nullopt;
  return RoutedExperts{first->tokens, first->indices, first->gates, *stacked, addends};
}

} // namespace shardc::graph
