//===- VjpAttention.cpp - gradients of attention and rotary embeddings ------===//
//
// Attention's backward recomputes the probabilities from q and k (the
// forward kernel keeps none), as FlashAttention does, here for the whole
// key range at once:
//   P = softmax(scale q k^T + mask),  dV = P^T dO,  dP = dO V^T,
//   dS = P (dP - rowsum(dP P)),  dQ = scale dS K,  dK = scale dS^T Q.
// Grouped-query heads are expanded to the query heads for the products and
// their gradients summed back over each group. A masked score takes the
// lowest finite value (no NaN), and a row with every key masked has zero
// probabilities, as the forward kernels output zeros for it.
//
// A rotation is orthogonal: its transpose rotates by the opposite angle,
// i.e. rotary(dy, cos, -sin') with sin' each pair's partner's sine.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/CausalMask.h"
#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;
using graph::tensorType;

/// [B..., Hkv, S, D] as [B..., Hkv * group, S, D] (each kv head repeated for
/// the query heads that read it).
Value repeatHeads(GradientBuilder &g, Value value, int64_t group) {
  if (group == 1)
    return value;
  SmallVector<int64_t> shape(shapeOf(value));
  int64_t rank = int64_t(shape.size());
  SmallVector<int64_t> split(shape.begin(), shape.end());
  split.insert(split.begin() + rank - 2, 1);
  SmallVector<int64_t> expanded(split);
  expanded[rank - 2] = group;
  SmallVector<int64_t> merged(shape);
  merged[rank - 3] *= group;
  return g.reshape(g.expand(g.reshape(value, split), expanded), merged);
}

/// The inverse of repeatHeads for gradients: summed over each group.
Value sumHeads(GradientBuilder &g, Value value, int64_t group) {
  if (group == 1)
    return value;
  SmallVector<int64_t> shape(shapeOf(value));
  int64_t rank = int64_t(shape.size());
  SmallVector<int64_t> split(shape);
  split[rank - 3] /= group;
  split.insert(split.begin() + rank - 2, group);
  return g.reduceSum(g.reshape(value, split), {rank - 2}, false);
}

LogicalResult attentionVjp(VjpCall &call, graph::AttentionOp attention) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  Location loc = g.loc();
  Value q = attention.getQuery(), k = attention.getKey(), v = attention.getValue();
  Value mask = attention.getMask();
  const bool floatMask = mask && !tensorType(mask).getElementType().isInteger(1);
  // A float mask is added to the scores (T5's relative position bias is a
  // trained embedding): its gradient is the scores'.
  if (mask && call.needed[3] && !floatMask)
    return call.refuse("its boolean mask depends on a trained weight");
  ArrayRef<int64_t> qShape = shapeOf(q);
  int64_t rank = int64_t(qShape.size());
  int64_t group = qShape[rank - 3] / shapeOf(k)[rank - 3];
  Value keys = repeatHeads(g, k, group), values = repeatHeads(g, v, group);
  const double scale = attention.getScale().convertToDouble();

  Value scores = g.scale(g.matmul(q, g.swapLastTwo(keys)), scale);
  RankedTensorType scoreType = tensorType(scores);
  Value lowest = g.scalarLike(scores, double(std::numeric_limits<float>::lowest()));
  if (mask)
    scores = floatMask ? g.add(scores, mask) : g.where(mask, scores, lowest);
  // The keys each query sees, when some query may see none.
  Value seenKeys = mask && !floatMask ? mask : Value();
  if (attention.getCausal()) {
    // Query i sees key j <= i + Sk - Sq (aligned at the bottom right).
    int64_t queries = scoreType.getShape()[rank - 2], keysCount = scoreType.getShape()[rank - 1];
    Value causal = b.create<graph::ConstantOp>(
        loc, cast<ElementsAttr>(
                 graph::causalMaskAttr(b.getContext(), queries, keysCount, keysCount - queries)));
    scores = g.where(causal, scores, lowest);
    if (seenKeys)
      seenKeys = b.create<graph::AndOp>(loc, seenKeys, causal);
    else if (queries > keysCount)
      seenKeys = causal;
  }
  Value probs = b.create<graph::SoftmaxOp>(loc, scores, b.getI64IntegerAttr(rank - 1));
  // A query that sees no key outputs zeros (the kernels'), not the uniform
  // row its lowest scores give: its probabilities are zero.
  if (seenKeys) {
    auto seenType = RankedTensorType::get(shapeOf(seenKeys), scoreType.getElementType());
    Value seen = b.create<graph::CastOp>(loc, seenType, seenKeys);
    int64_t keyAxis = tensorType(seen).getRank() - 1;
    Value seesAny = b.create<graph::ReduceMaxOp>(loc, seen, b.getDenseI64ArrayAttr({keyAxis}),
                                                 b.getBoolAttr(true));
    probs = g.mul(probs, seesAny);
  }
  Value dOut = call.dy();
  if (call.needed[2])
    call.set(2, sumHeads(g, g.matmul(g.swapLastTwo(probs), dOut), group));
  if (!call.needed[0] && !call.needed[1] && !(mask && call.needed[3]))
    return success();
  Value dProbs = g.matmul(dOut, g.swapLastTwo(values));
  Value rowDot = g.reduceSum(g.mul(dProbs, probs), {rank - 1}, true);
  Value dMasked = g.mul(probs, g.sub(dProbs, rowDot));
  if (mask && call.needed[3])
    call.set(3, g.sumToShape(dMasked, shapeOf(mask)));
  Value dScores = g.scale(dMasked, scale);
  if (call.needed[0])
    call.set(0, g.matmul(dScores, keys));
  if (call.needed[1])
    call.set(1, sumHeads(g, g.matmul(g.swapLastTwo(dScores), q), group));
  return success();
}

/// Each rotated pair's partner's value: halves swapped, or neighbours
/// swapped when the pairs are interleaved.
Value partners(GradientBuilder &g, Value table, bool interleaved) {
  OpBuilder &b = g.b();
  ArrayRef<int64_t> shape = shapeOf(table);
  int64_t rank = int64_t(shape.size()), rotated = shape.back();
  if (!interleaved) {
    auto halves = b.create<graph::SplitOp>(g.loc(), table, uint64_t(rank - 1),
                                           ArrayRef<int64_t>{rotated / 2, rotated / 2});
    return b.create<graph::ConcatOp>(g.loc(), ValueRange{halves.getResult(1), halves.getResult(0)},
                                     b.getI64IntegerAttr(rank - 1));
  }
  SmallVector<int64_t> pairs(shape.drop_back());
  pairs.append({rotated / 2, 2});
  Value paired = g.reshape(table, pairs);
  auto sides = b.create<graph::SplitOp>(g.loc(), paired, uint64_t(rank), ArrayRef<int64_t>{1, 1});
  Value swapped = b.create<graph::ConcatOp>(
      g.loc(), ValueRange{sides.getResult(1), sides.getResult(0)}, b.getI64IntegerAttr(rank));
  return g.reshape(swapped, shape);
}

LogicalResult rotaryVjp(VjpCall &call, graph::RotaryOp rotary) {
  if (call.needed[1] || call.needed[2])
    return call.refuse("its cos or sin table depends on a trained weight");
  GradientBuilder &g = call.build;
  Value sine = g.neg(partners(g, rotary.getSin(), rotary.getInterleaved()));
  call.set(0, g.b().create<graph::RotaryOp>(g.loc(), call.dy(), rotary.getCos(), sine,
                                            g.b().getBoolAttr(rotary.getInterleaved())));
  return success();
}

} // namespace

std::optional<LogicalResult> vjpAttention(VjpCall &call) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(call.op)
      .Case([&](graph::AttentionOp attention) { return attentionVjp(call, attention); })
      .Case([&](graph::RotaryOp rotary) { return rotaryVjp(call, rotary); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
