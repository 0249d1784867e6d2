//===- RaiseAttention.cpp - scaled dot-product attention from primitives --===//
//
// Anchored at each softmax over the last axis whose only user is the context
// matmul `probs @ v`. Walking down from the softmax input to the score matmul
// `q @ kT`, the walk collects constant scale factors, additive masks and
// where()-masks; then it peels scales off q and k, the transpose off kT and
// grouped-query head repetition off k and v.
//
//===----------------------------------------------------------------------===//
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

struct Mask {
  Value value;
  bool keep;    ///< boolean mask: true keeps the score; else additive float
  double scale; ///< an additive mask applied under a scale must be scaled too
};

struct ScoreChain {
  Value q, kT;
  double scale = 1.0;
  SmallVector<Mask> masks;
};

/// True when `value` can reach a matmul through the ops a score chain uses.
bool reachesMatMul(Value value, int depth = 0) {
  Operation *op = value.getDefiningOp();
  if (!op || depth > 8)
    return false;
  if (isa<MatMulOp>(op))
    return true;
  if (!isa<MulOp, DivOp, AddOp, WhereOp>(op))
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
    if (auto add = producer<AddOp>(value)) {
      bool lhsScores = reachesMatMul(add.getLhs()), rhsScores = reachesMatMul(add.getRhs());
      if (lhsScores == rhsScores)
        return std::nullopt;
      chain.masks.push_back({lhsScores ? add.getRhs() : add.getLhs(), false, chain.scale});
      value = lhsScores ? add.getLhs() : add.getRhs();
      continue;
    }
    if (auto where = producer<WhereOp>(value)) {
      std::optional<double> fillFalse = splatValue(where.getFalseValue());
      if (!fillFalse || *fillFalse > kHiddenScore || !reachesMatMul(where.getTrueValue()))
        return std::nullopt;
      chain.masks.push_back({where.getCondition(), true, chain.scale});
      value = where.getTrueValue();
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

/// k from k^T: the input of a transpose that swaps the last two dims.
Value untransposed(Value kT) {
  auto transpose = producer<TransposeOp>(kT);
  if (!transpose)
    return {};
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = perm.size();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t expected = d == rank - 1 ? rank - 2 : d == rank - 2 ? rank - 1 : d;
    if (perm[d] != expected)
      return {};
  }
  return transpose.getInput();
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

/// True when `mask` is a constant that keeps exactly key j <= i + Sk - Sq for
/// query i (graph.attention's causal rule), in every leading position: a
/// boolean keep-mask or an additive 0 / hidden mask.
bool isCausalConstant(const Mask &mask, int64_t queries, int64_t keys) {
  DenseElementsAttr values;
  if (!matchPattern(mask.value, m_Constant(&values)))
    return false;
  auto type = cast<RankedTensorType>(values.getType());
  if (type.getRank() < 2 || type.getNumElements() > (int64_t(1) << 24))
    return false;
  int64_t rows = type.getShape()[type.getRank() - 2], columns = type.getShape().back();
  if (rows != queries || columns != keys)
    return false;
  int64_t offset = columns - rows, index = 0;
  if (mask.keep) {
    for (bool keep : values.getValues<bool>()) {
      int64_t row = (index / columns) % rows, column = index % columns;
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

/// Combines the remaining masks into the attention op's single mask operand.
Value combineMasks(OpBuilder &builder, Location location, ArrayRef<Mask> masks) {
  Value keep, additive;
  for (const Mask &mask : masks) {
    if (mask.keep) {
      keep = keep ? builder.create<AndOp>(location, keep, mask.value).getResult() : mask.value;
      continue;
    }
    Value scaled = mask.value;
    if (mask.scale != 1.0) {
      Type element = tensorType(mask.value).getElementType();
      auto factor = builder.create<ConstantOp>(
          location, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                           builder.getFloatAttr(element, mask.scale)));
      scaled = builder.create<MulOp>(location, scaled, factor);
    }
    additive = additive ? builder.create<AddOp>(location, additive, scaled).getResult() : scaled;
  }
  if (keep && additive) {
    Type element = tensorType(additive).getElementType();
    auto hidden = builder.create<ConstantOp>(
        location, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                         builder.getFloatAttr(element, -INFINITY)));
    return builder.create<WhereOp>(location, keep, additive, hidden);
  }
  return keep ? keep : additive;
}

void raiseAttention(SoftmaxOp softmax) {
  if (softmax.getAxis() != softmax.getType().getRank() - 1)
    return;
  auto context = dyn_cast_or_null<MatMulOp>(soleUser(softmax));
  if (!context || context.getLhs() != softmax.getResult())
    return;
  std::optional<ScoreChain> chain = matchScores(softmax.getInput());
  if (!chain)
    return;
  double scale = chain->scale;
  Value q = peelScale(chain->q, scale);
  Value kT = peelScale(chain->kT, scale);
  Value k = untransposed(kT), v = context.getRhs();
  OpBuilder builder(context);
  Location location = context.getLoc();
  if (!k) {
    int64_t rank = tensorType(kT).getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 1], perm[rank - 2]);
    k = builder.create<TransposeOp>(location, kT, perm);
  }
  Value kHeads = unrepeated(k), vHeads = unrepeated(v);
  if (kHeads && vHeads && tensorType(kHeads).getShape()[tensorType(kHeads).getRank() - 3] ==
                              tensorType(vHeads).getShape()[tensorType(vHeads).getRank() - 3]) {
    k = kHeads;
    v = vHeads;
  }
  bool causal = false;
  SmallVector<Mask> masks;
  int64_t queries = tensorType(q).getShape().drop_back().back();
  int64_t keys = tensorType(k).getShape().drop_back().back();
  for (const Mask &mask : chain->masks) {
    if (!causal && isCausalConstant(mask, queries, keys))
      causal = true;
    else
      masks.push_back(mask);
  }
  SmallVector<Value> operands = {q, k, v};
  if (Value mask = combineMasks(builder, location, masks))
    operands.push_back(mask);
  auto attention = createIfValid<AttentionOp>(
      builder, location, operands,
      {builder.getNamedAttr("scale", builder.getF64FloatAttr(scale)),
       builder.getNamedAttr("causal", builder.getBoolAttr(causal))});
  if (attention)
    replaceIfSameType(context, attention);
}

struct RaiseAttentionPass : shardc::graph::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {
    SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp softmax) { softmaxes.push_back(softmax); });
    for (SoftmaxOp softmax : softmaxes)
      raiseAttention(softmax);
    eraseDeadOps(getOperation());
  }
};

} // namespace
