//===- RaiseAttention.cpp - scaled dot-product attention from primitives --===//
//
// Anchored at each softmax over the last axis whose only user is the context
// matmul `probs @ v`. Walking down from the softmax input to the score matmul
// `q @ kT`, the walk collects constant scale factors, additive masks and
// where()-masks; then it peels scales off q and k, the transpose off kT and
// grouped-query head repetition off k and v. Scores computed with the heads
// folded into the batch ([B*H, Sq, Sk], reshaped to [B, H, Sq, Sk] before
// the softmax or not) give an attention op on [B, H, S, D] operands.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/HeadLayout.h"
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// Anything at or below this hides a score: exp() of it underflows to 0 in fp32
/// after any realistic scale.
constexpr double kHiddenScore = -1e4;

/// How a mask acts on the scores: a boolean that keeps its true positions,
/// one that hides them (masked_fill), or a float added to them.
enum class MaskKind { keep, hide, additive };

struct Mask {
  Value value;
  MaskKind kind;
  double scale; ///< an additive mask applied under a scale must be scaled too
  double fill;  ///< the score a boolean mask puts at hidden positions
  bool merged;  ///< applied to [B*H, Sq, Sk] scores, below the chain's reshape
};

struct ScoreChain {
  Value q, kT;
  double scale = 1.0;
  SmallVector<Mask> masks;
  /// Set when the scores were computed as [B*H, Sq, Sk] and reshaped to
  /// [B, H, Sq, Sk] on the way to the softmax.
  std::optional<MergedHeads> merged;
  /// max(scores, floor) on the way: every additive mask is clamped there.
  std::optional<double> clamp;
};

/// [B*H, Sq, Sk] -> [B, H, Sq, Sk]: the heads leaving the batch (or, with
/// `merging`, the reverse view).
std::optional<MergedHeads> splitsHeads(ReshapeOp reshape, bool merging = false) {
  ArrayRef<int64_t> from = tensorType(reshape.getInput()).getShape();
  ArrayRef<int64_t> to = reshape.getType().getShape();
  if (merging)
    std::swap(from, to);
  if (from.size() != 3 || to.size() != 4 || to[0] * to[1] != from[0] ||
      to.take_back(2) != from.take_back(2))
    return std::nullopt;
  return MergedHeads{to[0], to[1]};
}

/// True when `value` can reach a matmul through the ops a score chain uses.
bool reachesMatMul(Value value, int depth = 0) {
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return false;
  if (isa<MatMulOp>(op))
    return true;
  if (!isa<MulOp, DivOp, AddOp, WhereOp, ReshapeOp>(op))
    return false;
  return llvm::any_of(op->getOperands(), [&](Value v) { return reachesMatMul(v, depth + 1); });
}

std::optional<ScoreChain> matchScores(Value value) {
  ScoreChain chain;
  for (int steps = 0; steps < 16; ++steps) {
    if (auto matmul = producer<MatMulOp>(value)) {
      chain.q = matmul.getLhs();
      chain.kT = matmul.getRhs();
      return chain;
    }
    Product product = flattenProduct(value);
    if (product.factors.size() == 1 && product.factors.front() != value) {
      chain.scale *= product.scale;
      value = product.factors.front();
      continue;
    }
    bool merged = chain.merged.has_value();
    if (auto add = producer<AddOp>(value)) {
      bool lhsScores = reachesMatMul(add.getLhs()), rhsScores = reachesMatMul(add.getRhs());
      if (lhsScores == rhsScores)
        return std::nullopt;
      Value mask = lhsScores ? add.getRhs() : add.getLhs();
      // baddbmm(zeros, q, kT) adds a zero tensor: no mask at all.
      if (splatValue(mask) != 0.0)
        chain.masks.push_back({mask, MaskKind::additive, chain.scale, 0.0, merged});
      value = lhsScores ? add.getLhs() : add.getRhs();
      continue;
    }
    if (auto where = producer<WhereOp>(value)) {
      // where(keep, scores, hidden) or, masked_fill's spelling, where(hide,
      // hidden, scores).
      bool scoresKept = reachesMatMul(where.getTrueValue());
      Value scores = scoresKept ? where.getTrueValue() : where.getFalseValue();
      std::optional<double> fill = splatValue(scoresKept ? where.getFalseValue()
                                                         : where.getTrueValue());
      if (!fill || *fill > kHiddenScore || !reachesMatMul(scores))
        return std::nullopt;
      chain.masks.push_back({where.getCondition(), scoresKept ? MaskKind::keep : MaskKind::hide,
                             chain.scale, *fill, merged});
      value = scores;
      continue;
    }
    if (auto clamp = producer<MaxOp>(value)) {
      // OPT clamps the masked scores at the lowest finite value: the same as
      // clamping the masks, since such a value absorbs any score.
      bool lhsScores = reachesMatMul(clamp.getLhs());
      std::optional<double> floor = splatValue(lhsScores ? clamp.getRhs() : clamp.getLhs());
      if (!floor || *floor > kHiddenScore || chain.clamp)
        return std::nullopt;
      chain.clamp = *floor;
      value = lhsScores ? clamp.getLhs() : clamp.getRhs();
      continue;
    }
    if (auto reshape = producer<ReshapeOp>(value); reshape && !chain.merged) {
      // [B, H, Sq, Sk] viewed as [B*H, Sq, Sk] for a 3-D softmax (OPT), as
      // the chain's first step: the scores below are 4-D.
      if (steps == 0 && splitsHeads(reshape, /*merging=*/true)) {
        value = reshape.getInput();
        continue;
      }
      chain.merged = splitsHeads(reshape);
      if (!chain.merged)
        return std::nullopt;
      value = reshape.getInput();
      continue;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// Strips constant factors off `value` into `scale`.
Value peelScale(Value value, double &scale) {
  Product product = flattenProduct(value);
  if (product.factors.size() != 1)
    return value;
  scale *= product.scale;
  return product.factors.front();
}

/// kT = reshape(transpose(reshape(x -> [N, Sk, D]), (0, 2, 1))) back to
/// [B..., D, Sk]: the dynamo exporter's SDPA forms k^T with the leading dims
/// merged (x may still hold repeat_kv's [B, Hkv, n, Sk, D]). Returns k as
/// [B..., Sk, D] (x itself, or a view of it), or null.
Value unmergedTranspose(OpBuilder &builder, Location location, Value kT) {
  auto split = producer<ReshapeOp>(kT);
  auto transpose = split ? producer<TransposeOp>(split.getInput()) : TransposeOp();
  auto merge = transpose ? producer<ReshapeOp>(transpose.getInput()) : ReshapeOp();
  if (!merge || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1})
    return {};
  Value x = merge.getInput();
  ArrayRef<int64_t> xShape = tensorType(x).getShape(), kTShape = tensorType(kT).getShape();
  ArrayRef<int64_t> merged = tensorType(merge).getShape();
  int64_t rank = kTShape.size();
  if (rank < 3 || xShape.size() < 3 || merged.take_back(2) != xShape.take_back(2) ||
      kTShape[rank - 1] != xShape[xShape.size() - 2] ||
      kTShape[rank - 2] != xShape.back() ||
      ShapedType::getNumElements(xShape.drop_back(2)) !=
          ShapedType::getNumElements(kTShape.drop_back(2)))
    return {};
  if (xShape.drop_back(2) == kTShape.drop_back(2))
    return x;
  SmallVector<int64_t> kShape(kTShape.drop_back(2));
  kShape.append({kTShape[rank - 1], kTShape[rank - 2]});
  return builder.create<ReshapeOp>(
      location, RankedTensorType::get(kShape, tensorType(kT).getElementType()), x);
}

/// k from k^T ([..., D, Sk] -> [..., Sk, D]): the input of a transpose that
/// swapped the last two dims, or one transpose of that input when kT came
/// from a longer permutation (torch's [S, B*H, D] keys transposed twice).
Value untransposed(OpBuilder &builder, Location location, Value kT) {
  if (Value k = unmergedTranspose(builder, location, kT))
    return k;
  int64_t rank = tensorType(kT).getRank();
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swap[rank - 1], swap[rank - 2]);
  Value source = kT;
  SmallVector<int64_t> perm = swap;
  if (auto transpose = producer<TransposeOp>(kT)) {
    // k dim d is kT dim swap[d], which is the transpose input's dim
    // transpose.perm[swap[d]].
    source = transpose.getInput();
    for (int64_t d = 0; d < rank; ++d)
      perm[d] = transpose.getPerm()[swap[d]];
  }
  if (llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    return source;
  return builder.create<TransposeOp>(location, source, perm);
}

/// The key/value heads before repeat_kv: reshape(expand(unsqueeze(kv))) with
/// [B, Hkv, S, D] -> [B, Hkv, 1, S, D] -> [B, Hkv, n, S, D] -> [B, Hkv*n, S, D].
Value unrepeated(Value repeated) {
  auto merge = producer<ReshapeOp>(repeated);
  auto expand = merge ? producer<ExpandOp>(merge.getInput()) : ExpandOp();
  auto split = expand ? producer<ReshapeOp>(expand.getInput()) : ReshapeOp();
  if (!split)
    return {};
  ArrayRef<int64_t> heads = split.getInput().getType().getShape();
  ArrayRef<int64_t> widened = expand.getType().getShape();
  int64_t rank = heads.size();
  if (rank < 3 || widened.size() != heads.size() + 1)
    return {};
  SmallVector<int64_t> inserted(heads.take_front(rank - 2));
  inserted.push_back(1);
  llvm::append_range(inserted, heads.take_back(2));
  if (split.getType().getShape() != ArrayRef<int64_t>(inserted))
    return {};
  int64_t copies = widened[rank - 2];
  SmallVector<int64_t> merged(heads);
  merged[rank - 3] *= copies;
  if (merge.getType().getShape() != ArrayRef<int64_t>(merged))
    return {};
  return split.getInput();
}

/// The largest mask whose values are read to see whether it is causal.
constexpr int64_t kMaxInspectedMaskElements = int64_t(1) << 24;

/// True when `mask` is a constant that keeps exactly key j <= i + Sk - Sq for
/// query i (graph.attention's causal rule), in every leading position: a
/// boolean keep- or hide-mask or an additive 0 / hidden mask.
bool isCausalConstant(const Mask &mask, int64_t queries, int64_t keys, WeightValues &weights) {
  std::optional<DenseElementsAttr> constant =
      compileTimeValue(mask.value, weights, kMaxInspectedMaskElements);
  if (!constant)
    return false;
  DenseElementsAttr values = *constant;
  auto type = cast<RankedTensorType>(values.getType());
  if (type.getRank() < 2)
    return false;
  int64_t rows = type.getShape()[type.getRank() - 2], columns = type.getShape().back();
  if (rows != queries || columns != keys)
    return false;
  int64_t offset = columns - rows, index = 0;
  if (mask.kind != MaskKind::additive) {
    for (bool flag : values.getValues<bool>()) {
      int64_t row = (index / columns) % rows, column = index % columns;
      bool keep = mask.kind == MaskKind::keep ? flag : !flag;
      if (keep != (column <= row + offset))
        return false;
      ++index;
    }
    return true;
  }
  if (!isa<FloatType>(type.getElementType()))
    return false;
  for (APFloat element : values.getValues<APFloat>()) {
    int64_t row = (index / columns) % rows, column = index % columns;
    double v = element.convertToDouble();
    if (column <= row + offset ? v != 0.0 : v * mask.scale > kHiddenScore)
      return false;
    ++index;
  }
  return true;
}

/// A mask applied to [B*H, Sq, Sk] scores, as it applies to [B, H, Sq, Sk].
Value unmergedMask(OpBuilder &builder, Location location, const Mask &mask, MergedHeads heads) {
  ArrayRef<int64_t> shape = tensorType(mask.value).getShape();
  // Masks of rank < 3, or with a broadcast leading dim, broadcast the same way.
  if (shape.size() < 3 || shape[shape.size() - 3] == 1)
    return mask.value;
  SmallVector<int64_t> split(shape.drop_back(3));
  llvm::append_range(split, SmallVector<int64_t>{heads.batch, heads.heads});
  llvm::append_range(split, shape.take_back(2));
  auto type = RankedTensorType::get(split, tensorType(mask.value).getElementType());
  return builder.create<ReshapeOp>(location, type, mask.value);
}

Value scalarConstant(OpBuilder &builder, Location location, Type element, double value) {
  return builder.create<ConstantOp>(
      location, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                       builder.getFloatAttr(element, value)));
}

/// Combines the masks into the attention op's single mask operand, keeping
/// the exported graph's value at every position, fully masked rows included:
/// a boolean mask that hides with -inf stays boolean (the op drops those
/// keys); one that hides with a finite value (Hugging Face's finfo.min)
/// becomes the additive where(keep, 0, fill), which gives the same scores
/// since such a fill absorbs any score, so a row with every key hidden
/// averages the keys as the exported graph does.
Value combineMasks(OpBuilder &builder, Location location, ArrayRef<Mask> masks,
                   std::optional<MergedHeads> merged, Type element,
                   std::optional<double> clamp) {
  Value keep, additive;
  auto add = [&](Value term) {
    additive = additive ? builder.create<AddOp>(location, additive, term).getResult() : term;
  };
  for (const Mask &mask : masks) {
    Value value = mask.merged ? unmergedMask(builder, location, mask, *merged) : mask.value;
    if (mask.kind == MaskKind::additive) {
      if (mask.scale != 1.0)
        value = builder.create<MulOp>(location, value,
                                      scalarConstant(builder, location, element, mask.scale));
      add(value);
      continue;
    }
    if (mask.kind == MaskKind::hide)
      value = builder.create<NotOp>(location, value);
    if (std::isinf(mask.fill)) {
      keep = keep ? builder.create<AndOp>(location, keep, value).getResult() : value;
      continue;
    }
    add(builder.create<WhereOp>(location, value, scalarConstant(builder, location, element, 0.0),
                                scalarConstant(builder, location, element,
                                               mask.fill * mask.scale)));
  }
  if (additive && clamp)
    additive = builder.create<MaxOp>(location, additive,
                                     scalarConstant(builder, location, element, *clamp));
  if (keep && additive)
    return builder.create<WhereOp>(location, keep, additive,
                                   scalarConstant(builder, location, element, -INFINITY));
  return keep ? keep : additive;
}

/// q, k and v as [B, H, S, D] when the scores were computed with the heads
/// folded into the batch; false (operands untouched) when they cannot be.
bool unfoldOperands(OpBuilder &builder, Location location, std::optional<MergedHeads> merged,
                    Value &q, Value &k, Value &v) {
  if (tensorType(q).getRank() != 3)
    return false;
  Value q4 = unfoldHeads(builder, location, q, merged);
  if (!q4)
    return false;
  int64_t batch = tensorType(q4).getShape()[0];
  auto unfold = [&](Value x) -> Value {
    if (tensorType(x).getRank() != 3)
      return merged ? x : Value();
    int64_t folded = tensorType(x).getShape()[0];
    if (folded % batch != 0)
      return {};
    return unfoldHeads(builder, location, x, MergedHeads{batch, folded / batch});
  };
  Value k4 = unfold(k), v4 = unfold(v);
  if (!k4 || !v4)
    return false;
  q = q4;
  k = k4;
  v = v4;
  return true;
}

/// The probabilities the context matmul reads: the softmax itself, or
/// where(is_nan(p), 0, p), torch's SDPA guard that zeroes a row whose every
/// key was hidden with -inf (graph.attention gives such a row zeros too).
Value guardedProbabilities(SoftmaxOp softmax) {
  Value probabilities = softmax.getResult();
  // Bloom views [B, H, Sq, Sk] probabilities as [B*H, Sq, Sk] for a 3-D bmm.
  if (auto merge = dyn_cast_or_null<ReshapeOp>(soleUser(probabilities));
      merge && splitsHeads(merge, /*merging=*/true))
    return merge.getResult();
  if (soleUser(probabilities))
    return probabilities;
  WhereOp guard;
  for (Operation *user : probabilities.getUsers()) {
    if (auto where = dyn_cast<WhereOp>(user); where && !guard)
      guard = where;
    else if (!isa<IsNanOp>(user))
      return {};
  }
  if (!guard || guard.getFalseValue() != probabilities || splatValue(guard.getTrueValue()) != 0.0)
    return {};
  auto isNan = producer<IsNanOp>(guard.getCondition());
  if (!isNan || isNan.getInput() != probabilities)
    return {};
  return guard.getResult();
}

void raiseAttention(SoftmaxOp softmax, WeightValues &weights) {
  if (int64_t(softmax.getAxis()) != softmax.getType().getRank() - 1)
    return;
  Value probabilities = guardedProbabilities(softmax);
  auto context =
      probabilities ? dyn_cast_or_null<MatMulOp>(soleUser(probabilities)) : MatMulOp();
  if (!context || context.getLhs() != probabilities)
    return;
  std::optional<ScoreChain> chain = matchScores(softmax.getInput());
  if (!chain)
    return;
  double scale = chain->scale;
  Value q = peelScale(chain->q, scale);
  Value kT = peelScale(chain->kT, scale);
  OpBuilder builder(context);
  Location location = context.getLoc();
  Value k = untransposed(builder, location, kT), v = context.getRhs();
  bool unfolded = unfoldOperands(builder, location, chain->merged, q, k, v);
  if (chain->merged && !unfolded)
    return;
  Value kHeads = unrepeated(k), vHeads = unrepeated(v);
  if (kHeads && vHeads && tensorType(kHeads).getShape()[tensorType(kHeads).getRank() - 3] ==
                              tensorType(vHeads).getShape()[tensorType(vHeads).getRank() - 3]) {
    k = kHeads;
    v = vHeads;
  }
  // The causal flag drops hidden keys, which matches the exported graph only
  // while every row sees a key: when the causal mask is the only one.
  bool causal = false;
  SmallVector<Mask> masks(chain->masks);
  int64_t queries = tensorType(q).getShape().drop_back().back();
  int64_t keys = tensorType(k).getShape().drop_back().back();
  if (masks.size() == 1 && keys >= queries &&
      isCausalConstant(masks.front(), queries, keys, weights)) {
    causal = true;
    masks.clear();
  }
  std::optional<MergedHeads> merged = chain->merged;
  if (unfolded && !merged) {
    ArrayRef<int64_t> heads = tensorType(q).getShape();
    merged = MergedHeads{heads[0], heads[1]};
    for (Mask &mask : masks)
      mask.merged = true;
  }
  SmallVector<Value> operands = {q, k, v};
  if (Value mask =
          combineMasks(builder, location, masks, merged, tensorType(q).getElementType(),
                       chain->clamp))
    operands.push_back(mask);
  auto attention = createIfValid<AttentionOp>(
      builder, location, operands,
      {builder.getNamedAttr("scale", builder.getF64FloatAttr(scale)),
       builder.getNamedAttr("causal", builder.getBoolAttr(causal))});
  if (!attention)
    return;
  // Scores merged all the way to the context matmul leave a [B*H, Sq, Dv]
  // result for the ops after it.
  if (unfolded && tensorType(context).getRank() == 3)
    replaceMergedHeads(builder, context, attention);
  else
    replaceIfSameType(context, attention);
}

struct RaiseAttentionPass : shardc::graph::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp softmax) { softmaxes.push_back(softmax); });
    WeightValues weights;
    for (SoftmaxOp softmax : softmaxes)
      raiseAttention(softmax, weights);
    eraseDeadOps(getOperation());
  }
};

} // namespace
