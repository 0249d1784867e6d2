//===- SplitFusedProjections.cpp - one linear layer per part of a fused one -===//
#include "passes/Sharding/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/WeightBox.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_SPLITFUSEDPROJECTIONSPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

/// One consumer's view of the fused output: features [begin, end), taken
/// directly or, after a view as heads, as whole heads (then `result` is that
/// view's part and the piece is reshaped to it).
struct Part {
  Value result;
  int64_t begin, end;
  bool viewed = false;
  /// The head view transposed before the part was taken (the dynamo export
  /// of Falcon takes k and v from [heads, B, S, D]): the piece is too.
  SmallVector<int64_t> perm;
};

/// The parts `linear`'s users take along its last dim, or nothing when a
/// user does anything else with it.
std::optional<SmallVector<Part>> partsOf(graph::LinearOp linear) {
  int64_t last = linear.getType().getRank() - 1;
  ArrayRef<int64_t> shape = linear.getType().getShape();
  SmallVector<Part> parts;
  for (Operation *user : linear->getUsers()) {
    if (auto split = dyn_cast<graph::SplitOp>(user); split && int64_t(split.getAxis()) == last) {
      int64_t begin = 0;
      for (auto [result, size] : llvm::zip(split.getResults(), split.getSizes())) {
        parts.push_back({result, begin, begin + size, /*viewed=*/false, /*perm=*/{}});
        begin += size;
      }
      continue;
    }
    auto slice = dyn_cast<graph::SliceOp>(user);
    if (!slice)
      return std::nullopt;
    for (int64_t dim = 0; dim < last; ++dim)
      if (slice.getStarts()[dim] != 0 || slice.getEnds()[dim] < shape[dim] ||
          slice.getSteps()[dim] != 1)
        return std::nullopt;
    if (slice.getSteps()[last] != 1)
      return std::nullopt;
    parts.push_back({slice.getResult(), slice.getStarts()[last],
                     std::min(slice.getEnds()[last], shape[last]), /*viewed=*/false, /*perm=*/{}});
  }
  if (parts.size() < 2)
    return std::nullopt;
  return parts;
}

/// The heads [begin, end) a user takes along dim `axis` of a head view: a
/// unit-step slice whole elsewhere, or a gather of consecutive constant
/// indices (Falcon's fused query_key_value picks k and v heads that way).
std::optional<std::pair<int64_t, int64_t>> headRange(Operation *user, int64_t axis,
                                                     ArrayRef<int64_t> shape) {
  if (auto slice = dyn_cast<graph::SliceOp>(user)) {
    for (int64_t dim = 0; dim < int64_t(shape.size()); ++dim)
      if (slice.getSteps()[dim] != 1 ||
          (dim != axis && (slice.getStarts()[dim] != 0 || slice.getEnds()[dim] < shape[dim])))
        return std::nullopt;
    return std::pair(slice.getStarts()[axis], std::min(slice.getEnds()[axis], shape[axis]));
  }
  auto gather = dyn_cast<graph::GatherOp>(user);
  DenseIntElementsAttr indices;
  if (!gather || int64_t(gather.getAxis()) != axis ||
      !matchPattern(gather.getIndices(), m_Constant(&indices)) || indices.getNumElements() == 0 ||
      cast<ShapedType>(indices.getType()).getRank() > 1)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (APInt index : indices.getValues<APInt>())
    values.push_back(index.getSExtValue() < 0 ? index.getSExtValue() + shape[axis]
                                              : index.getSExtValue());
  for (size_t i = 1; i < values.size(); ++i)
    if (values[i] != values[i - 1] + 1)
      return std::nullopt;
  if (values.front() < 0 || values.back() >= shape[axis])
    return std::nullopt;
  return std::pair(values.front(), values.back() + 1);
}

/// The parts when `linear`'s only user views its features as [.., heads,
/// depth] and every user of that view takes whole heads.
std::optional<SmallVector<Part>> headPartsOf(graph::LinearOp linear) {
  auto view = linear->hasOneUse() ? dyn_cast<graph::ReshapeOp>(*linear->user_begin())
                                  : graph::ReshapeOp();
  if (!view)
    return std::nullopt;
  ArrayRef<int64_t> shape = view.getType().getShape();
  ArrayRef<int64_t> features = linear.getType().getShape();
  int64_t axis = int64_t(shape.size()) - 2;
  if (axis < 1 || shape.drop_back(2) != features.drop_back() ||
      shape[axis] * shape.back() != features.back())
    return std::nullopt;
  SmallVector<Part> parts;
  int64_t depth = shape.back();
  for (Operation *user : view->getUsers()) {
    if (auto transpose = dyn_cast<graph::TransposeOp>(user)) {
      // Heads moved to dim 0, then taken one index tuple at a time.
      if (transpose.getPerm().empty() || transpose.getPerm()[0] != axis)
        return std::nullopt;
      for (Operation *taker : transpose->getUsers()) {
        auto gather = dyn_cast<graph::GatherNdOp>(taker);
        DenseIntElementsAttr index;
        if (!gather || gather.getBatchDims() != 0 ||
            !matchPattern(gather.getIndices(), m_Constant(&index)) ||
            index.getType().getShape() != ArrayRef<int64_t>{1, 1})
          return std::nullopt;
        int64_t head = (*index.getValues<APInt>().begin()).getSExtValue();
        head = head < 0 ? head + shape[axis] : head;
        if (head < 0 || head >= shape[axis])
          return std::nullopt;
        parts.push_back({gather.getResult(), head * depth, (head + 1) * depth, /*viewed=*/true,
                         SmallVector<int64_t>(transpose.getPerm())});
      }
      continue;
    }
    auto heads = headRange(user, axis, shape);
    if (!heads)
      return std::nullopt;
    parts.push_back({user->getResult(0), heads->first * depth, heads->second * depth,
                     /*viewed=*/true, /*perm=*/{}});
  }
  if (parts.size() < 2)
    return std::nullopt;
  return parts;
}

void split(graph::LinearOp linear, ArrayRef<Part> parts) {
  auto weight = linear.getWeight().getDefiningOp<graph::WeightOp>();
  auto bias = linear.getBias() ? linear.getBias().getDefiningOp<graph::WeightOp>() : nullptr;
  OpBuilder builder(linear);
  int64_t featureDim = linear.getTransposeWeight() ? 0 : 1;
  for (Part part : parts) {
    Value partWeight = graph::weightBox(builder, weight, featureDim, part.begin, part.end);
    Value partBias = bias ? graph::weightBox(builder, bias, 0, part.begin, part.end).getResult() : Value();
    SmallVector<int64_t> shape(linear.getType().getShape());
    shape.back() = part.end - part.begin;
    Value piece = builder.create<graph::LinearOp>(
        linear.getLoc(), RankedTensorType::get(shape, linear.getType().getElementType()),
        linear.getInput(), partWeight, partBias, linear.getTransposeWeightAttr());
    if (part.viewed && !part.perm.empty()) {
      // [.., 1, D] viewed, then moved as the head view was: [1, B, S, D].
      ArrayRef<int64_t> viewShape = cast<RankedTensorType>(part.result.getType()).getShape();
      SmallVector<int64_t> unmoved(viewShape.size());
      for (auto [to, from] : llvm::enumerate(part.perm))
        unmoved[from] = viewShape[to];
      piece = builder.create<graph::ReshapeOp>(
          part.result.getLoc(),
          RankedTensorType::get(unmoved, linear.getType().getElementType()), piece);
      piece = builder.create<graph::TransposeOp>(part.result.getLoc(), piece, part.perm);
    } else if (part.viewed) {
      piece = builder.create<graph::ReshapeOp>(part.result.getLoc(), part.result.getType(), piece);
    }
    part.result.replaceAllUsesWith(piece);
  }
  // Everything between the fused linear and the parts is dead now: erase
  // users before the values they read.
  SmallVector<Operation *> dead;
  std::function<void(Operation *)> collect = [&](Operation *op) {
    for (Operation *user : op->getUsers())
      collect(user);
    dead.push_back(op);
  };
  for (Operation *user : linear->getUsers())
    collect(user);
  llvm::SetVector<Operation *> unique(dead.begin(), dead.end());
  for (Operation *op : unique)
    if (op->use_empty())
      op->erase();
  linear.erase();
  for (Operation *whole : {weight.getOperation(), bias ? bias.getOperation() : nullptr})
    if (whole && whole->use_empty())
      whole->erase();
}

/// Batched experts (transformers 5's Mixtral, exported with batched_mm):
/// each token's expert matrices W[E, N, K] gathered by expert id, applied to
/// the token as [.., N, K] x [.., K, 1], viewed as [.., N] and split along N
/// (gate and up fused). Each part gathers and applies its own box of W.
struct GatheredProduct {
  graph::SplitOp split;
  graph::ReshapeOp view;
  graph::MatMulOp product;
  graph::GatherNdOp gather;
  graph::WeightOp weight;
};

std::optional<GatheredProduct> gatheredProductOf(graph::SplitOp split) {
  GatheredProduct found{split, split.getInput().getDefiningOp<graph::ReshapeOp>(), {}, {}, {}};
  if (!found.view || !found.view->hasOneUse())
    return std::nullopt;
  found.product = found.view.getInput().getDefiningOp<graph::MatMulOp>();
  if (!found.product || !found.product->hasOneUse())
    return std::nullopt;
  found.gather = found.product.getLhs().getDefiningOp<graph::GatherNdOp>();
  if (!found.gather || !found.gather->hasOneUse() || found.gather.getBatchDims() != 0)
    return std::nullopt;
  found.weight = found.gather.getData().getDefiningOp<graph::WeightOp>();
  auto indices = cast<RankedTensorType>(found.gather.getIndices().getType());
  if (!found.weight || found.weight.getType().getRank() != 3 || indices.getShape().back() != 1 ||
      found.weight->hasAttr(graph::kTrainAttrName))
    return std::nullopt;
  // The view drops the product's trailing 1: [.., N, 1] -> [.., N], split on N.
  ArrayRef<int64_t> product = found.product.getType().getShape();
  ArrayRef<int64_t> view = found.view.getType().getShape();
  if (product.back() != 1 || product.drop_back() != view ||
      int64_t(split.getAxis()) != int64_t(view.size()) - 1)
    return std::nullopt;
  return found;
}

void split(GatheredProduct fused) {
  OpBuilder builder(fused.split);
  Location location = fused.product.getLoc();
  Type element = fused.product.getType().getElementType();
  int64_t begin = 0;
  for (auto [result, size] : llvm::zip(fused.split.getResults(), fused.split.getSizes())) {
    Value box = graph::weightBox(builder, fused.weight, 1, begin, begin + size);
    Value gathered = builder.create<graph::GatherNdOp>(fused.gather.getLoc(), box,
                                                       fused.gather.getIndices(), 0);
    SmallVector<int64_t> shape(fused.product.getType().getShape());
    shape[shape.size() - 2] = size;
    Value piece = builder.create<graph::MatMulOp>(location, RankedTensorType::get(shape, element),
                                                  gathered, fused.product.getRhs());
    piece = builder.create<graph::ReshapeOp>(fused.view.getLoc(), result.getType(), piece);
    result.replaceAllUsesWith(piece);
    begin += size;
  }
  for (Operation *op : std::initializer_list<Operation *>{fused.split, fused.view, fused.product,
                                                         fused.gather})
    op->erase();
  if (fused.weight->use_empty())
    fused.weight->erase();
}

struct SplitFusedProjectionsPass : impl::SplitFusedProjectionsPassBase<SplitFusedProjectionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<graph::LinearOp, SmallVector<Part>>> work;
    getOperation().walk([&](graph::LinearOp linear) {
      auto weight = linear.getWeight().getDefiningOp<graph::WeightOp>();
      auto bias = linear.getBias() ? linear.getBias().getDefiningOp<graph::WeightOp>() : nullptr;
      bool weightsKnown = weight && (!linear.getBias() || bias);
      if (!weightsKnown || (linear.getBias() && linear.getBias().getType().getRank() != 1))
        return;
      // A trained weight's boxes would be storage the update never writes;
      // a training step is split before its gradient is taken instead.
      if (weight->hasAttr(graph::kTrainAttrName) || (bias && bias->hasAttr(graph::kTrainAttrName)))
        return;
      if (auto parts = partsOf(linear))
        work.emplace_back(linear, std::move(*parts));
      else if (auto heads = headPartsOf(linear))
        work.emplace_back(linear, std::move(*heads));
    });
    for (auto &[linear, parts] : work)
      split(linear, parts);
    SmallVector<GatheredProduct> products;
    getOperation().walk([&](graph::SplitOp op) {
      if (auto fused = gatheredProductOf(op))
        products.push_back(*fused);
    });
    for (GatheredProduct fused : products)
      split(fused);
  }
};

} // namespace
} // namespace shardc::sharding
