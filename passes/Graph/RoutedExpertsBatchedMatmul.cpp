//===- RoutedExpertsBatchedMatmul.cpp - MoE as batched matmuls per entry --===//
//
// transformers 5's "batched_mm" experts keep each projection's weights
// stacked over the experts ([E, out, in], gate and up fused into one
// [E, 2F, H]). Per router entry n they gather its expert's matrices by the
// router's index (gather_nd), run its token through them as batched
// matmuls, weight the output by its gate, and sum each token's entries:
//
//   y[s(n)] += gates[g(n)] * down_{indices[i(n)]}(act(gate(x[x(n)])) * up(..))
//
// graph.moe's term for entry (t, j) when i(n) = g(n) = (t, j), x(n) = s(n) = t
// and n runs over every (t, j) once. The weights are graph.moe's as they are:
// gate and up are boxes of the fused weight.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/TypeUtils.h"
#include "passes/Graph/Matchers.h"
#include "passes/Graph/RoutedExperts.h"

using namespace mlir;

namespace shardc::graph {
namespace {

/// `value` before the reshapes that only regroup each entry's elements
/// (the leading dim stays the `entries`).
Value perEntry(Value value, int64_t entries) {
  while (auto reshape = producer<ReshapeOp>(value)) {
    ArrayRef<int64_t> in = shapeOf(reshape.getInput());
    if (in.empty() || in.front() != entries || shapeOf(value).front() != entries)
      break;
    value = reshape.getInput();
  }
  return value;
}

/// One projection of every entry: matmul of its expert's matrix (gathered
/// from a stacked weight by the router's index) with its input vector.
struct EntryProjection {
  WeightOp weight;              ///< [E, out, in] ("out x in") or [E, in, out]
  bool transposed;              ///< W_e x (a column), else x W_e (a row)
  Value input;                  ///< the entries' input vectors, as [N, in] or a view
  SmallVector<int64_t> entries; ///< per entry n, its router entry
  Value indices;                ///< the router's indices
};

/// The projection whose per-entry result (regrouped or not) is `value`.
std::optional<EntryProjection> matchProjection(Value value, int64_t entries) {
  auto matmul = producer<MatMulOp>(perEntry(value, entries));
  if (!matmul)
    return std::nullopt;
  for (bool transposed : {true, false}) {
    Value matrices = transposed ? matmul.getLhs() : matmul.getRhs();
    Value vectors = transposed ? matmul.getRhs() : matmul.getLhs();
    auto gather = producer<GatherNdOp>(matrices);
    WeightOp weight = gather ? plainWeight(gather.getData()) : WeightOp();
    if (!weight || gather.getBatchDims() != 0 || weight.getType().getRank() != 3)
      continue;
    // [N, 1] indices pick one [out, in] matrix per entry; the vectors are
    // one column [N, in, 1] (or row [N, 1, in]) per entry.
    ArrayRef<int64_t> index = shapeOf(gather.getIndices()), vector = shapeOf(vectors);
    int64_t in = weight.getType().getDimSize(transposed ? 2 : 1);
    SmallVector<int64_t> expected = {entries, transposed ? in : 1, transposed ? 1 : in};
    if (index != ArrayRef<int64_t>{entries, 1} || vector != ArrayRef(expected))
      continue;
    std::optional<RowOrigins> routed = routerEntries(gather.getIndices());
    if (!routed)
      return std::nullopt;
    return EntryProjection{weight, transposed, vectors, routed->rows, routed->source};
  }
  return std::nullopt;
}

/// The experts' MLP whose per-entry output is `value`, with the projections
/// it reads the entries' tokens and router entries from.
struct EntryMlp {
  StackedMlp mlp;
  SmallVector<EntryProjection, 3> projections;
};

/// act(gate) * up, gate and up either the two halves of one fused
/// projection (split along its outputs) or two projections.
std::optional<EntryMlp> matchGated(MulOp product, int64_t entries) {
  for (unsigned activated : {0u, 1u}) {
    Operation *act = product->getOperand(activated).getDefiningOp();
    std::optional<StringRef> kind = activationOf(act);
    if (!kind)
      continue;
    Value gate = act->getOperand(0), up = product->getOperand(1 - activated);
    auto split = producer<SplitOp>(gate);
    if (split && split == producer<SplitOp>(up)) {
      ArrayRef<int64_t> sizes = split.getSizes();
      int64_t rank = int64_t(shapeOf(split.getInput()).size());
      if (sizes.size() != 2 || sizes[0] != sizes[1] || rank != 2 ||
          (int64_t(split.getAxis()) != 1 && int64_t(split.getAxis()) != -1))
        return std::nullopt;
      std::optional<EntryProjection> fused = matchProjection(split.getInput(), entries);
      if (!fused)
        return std::nullopt;
      // The box of the fused weight along its outputs that each half is.
      int64_t dim = fused->transposed ? 1 : 2, width = sizes[0];
      int64_t gateAt = cast<OpResult>(gate).getResultNumber() * width;
      int64_t upAt = cast<OpResult>(up).getResultNumber() * width;
      StackedMlp mlp{{StackedWeight{{fused->weight.getResult()}, dim, gateAt, gateAt + width},
                      StackedWeight{{fused->weight.getResult()}, dim, upAt, upAt + width}},
                     *kind,
                     fused->transposed};
      return EntryMlp{mlp, {*fused}};
    }
    std::optional<EntryProjection> gateProjection = matchProjection(gate, entries);
    std::optional<EntryProjection> upProjection = matchProjection(up, entries);
    if (gateProjection && upProjection)
      return EntryMlp{StackedMlp{{StackedWeight{{gateProjection->weight.getResult()}},
                                  StackedWeight{{upProjection->weight.getResult()}}},
                                 *kind,
                                 gateProjection->transposed},
                      {*gateProjection, *upProjection}};
  }
  return std::nullopt;
}

/// down(act(gate) * up) or down(act(up)) per entry.
std::optional<EntryMlp> matchEntryMlp(Value output, int64_t entries) {
  std::optional<EntryProjection> down = matchProjection(output, entries);
  if (!down)
    return std::nullopt;
  Value hidden = perEntry(down->input, entries);
  std::optional<EntryMlp> found;
  if (auto product = producer<MulOp>(hidden)) {
    found = matchGated(product, entries);
  } else if (std::optional<StringRef> kind = activationOf(hidden.getDefiningOp())) {
    if (std::optional<EntryProjection> up =
            matchProjection(hidden.getDefiningOp()->getOperand(0), entries))
      found = EntryMlp{StackedMlp{{StackedWeight{{up->weight.getResult()}}}, *kind, up->transposed},
                       {*up}};
  }
  if (!found)
    return std::nullopt;
  found->mlp.weights.push_back(StackedWeight{{down->weight.getResult()}});
  found->projections.push_back(*down);
  // One token vector feeds the first projections; graph.moe has one layout.
  for (const EntryProjection &projection : found->projections)
    if (projection.transposed != down->transposed || projection.entries != down->entries ||
        projection.indices != down->indices ||
        (&projection != &found->projections.back() &&
         projection.input != found->projections.front().input))
      return std::nullopt;
  return found;
}

/// Per row of the product [N, H] summed by `sum` (a reduce_sum of a reshape
/// of it): the row of the sum it lands in.
std::optional<SmallVector<int64_t>> summedRows(ReduceSumOp sum, Value &product) {
  Value input = sum.getInput();
  product = input;
  while (auto reshape = producer<ReshapeOp>(product))
    product = reshape.getInput();
  ArrayRef<int64_t> shape = shapeOf(input), rows = shapeOf(product);
  ArrayRef<int64_t> axes = sum.getAxes();
  if (rows.size() != 2 || axes.empty())
    return std::nullopt;
  int64_t last = *llvm::max_element(axes), hidden = rows[1], inner = 1;
  for (int64_t d = last + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  if (llvm::any_of(axes, [](int64_t axis) { return axis < 0; }) || inner % hidden != 0)
    return std::nullopt;
  // Each product row is whole within the dims after the summed ones; the
  // row it lands in is its coordinates without the summed axes.
  SmallVector<int64_t> landed;
  for (int64_t row = 0; row < rows[0]; ++row) {
    int64_t flat = row * hidden, kept = 0, keptSize = 1;
    SmallVector<int64_t> coords(shape.size());
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      coords[d] = flat % shape[d];
      flat /= shape[d];
    }
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (llvm::is_contained(axes, d))
        continue;
      kept += coords[d] * keptSize;
      keptSize *= shape[d];
    }
    landed.push_back(kept / hidden);
  }
  return landed;
}

/// The routed part of the sum: sum over each token's entries of
/// expert(x) * gate.
std::optional<RoutedExperts> matchRouted(Value term) {
  auto sum = producer<ReduceSumOp>(term);
  Value weighted;
  std::optional<SmallVector<int64_t>> landed = sum ? summedRows(sum, weighted) : std::nullopt;
  auto product = producer<MulOp>(weighted);
  if (!landed || !product)
    return std::nullopt;
  int64_t entries = shapeOf(weighted)[0];
  for (unsigned gate : {0u, 1u}) {
    Value factor = product->getOperand(gate);
    std::optional<EntryMlp> mlp = matchEntryMlp(product->getOperand(1 - gate), entries);
    if (!mlp || shapeOf(factor) != ArrayRef<int64_t>{entries, 1} ||
        shapeOf(product->getOperand(1 - gate)) != shapeOf(weighted))
      continue;
    EntryProjection &first = mlp->projections.front();
    int64_t hidden = shapeOf(first.input)[first.transposed ? 1 : 2];
    std::optional<RowOrigins> gates = traceRows(factor, 1);
    std::optional<RowOrigins> tokens = traceRows(first.input, hidden);
    if (!gates || !tokens)
      return std::nullopt;
    ArrayRef<int64_t> indices = shapeOf(first.indices);
    int64_t slots = indices[1];
    auto topk = producer<TopKOp>(first.indices);
    if (!coversEachOnce(first.entries, indices[0] * slots) ||
        shapeOf(topk.getInput()).back() != first.weight.getType().getDimSize(0) ||
        cast<RankedTensorType>(gates->source.getType()).getNumElements() != indices[0] * slots ||
        shapeOf(tokens->source).back() != hidden ||
        cast<RankedTensorType>(tokens->source.getType()).getNumElements() != indices[0] * hidden ||
        shapeOf(term) != ArrayRef<int64_t>{indices[0], shapeOf(weighted)[1]})
      return std::nullopt;
    for (int64_t n = 0; n < entries; ++n) {
      int64_t entry = first.entries[n];
      if (gates->rows[n] != entry || tokens->rows[n] != entry / slots ||
          (*landed)[n] != entry / slots)
        return std::nullopt;
    }
    return RoutedExperts{tokens->source, first.indices, gates->source, mlp->mlp, {}};
  }
  return std::nullopt;
}

} // namespace

std::optional<RoutedExperts> matchBatchedMatmul(Value output) {
  SmallVector<Value> terms;
  sumTerms(output, terms);
  std::optional<RoutedExperts> found;
  SmallVector<Value> addends;
  for (Value term : terms) {
    std::optional<RoutedExperts> routed = found ? std::nullopt : matchRouted(term);
    if (routed)
      found = routed;
    else
      addends.push_back(term);
  }
  if (found)
    found->addends = addends;
  return found;
}

} // namespace shardc::graph
