//===- ReplicateKvHeads.cpp - a copy of the kv heads per tp rank ----------===//
//
// For attention with Hkv kv heads, Hq query heads and a tp axis of size t
// with Hkv < t, t % Hkv == 0 and Hq % t == 0: each key/value operand that is
// linear -> reshape [.., Hkv, D] -> (transpose | rotary)* gets rebuilt on a
// weight (and bias) whose heads repeat t / Hkv times, so the attention op
// sees t kv heads, kv head j being the original j / (t / Hkv): exactly the
// head query heads j * Hq/t ... read before. tp then splits the kv heads
// like any others.
//
//===----------------------------------------------------------------------===//
#include "passes/Sharding/Passes.h"

#include "passes/Sharding/MeshShape.h"
#include "passes/Sharding/ShardingConversion.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/InferredOps.h"
#include "dialects/Graph/TypeUtils.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_REPLICATEKVHEADSPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

/// The chain from a projection to an attention operand, projection first.
struct KvChain {
  graph::LinearOp linear;
  SmallVector<Operation *> steps; ///< reshape, then transposes and rotaries
};

/// Walks up from an attention operand through single-use transposes and
/// rotaries to the reshape that splits the projection's features into
/// [.., heads, depth], and the linear that made them.
std::optional<KvChain> chainOf(Value operand, int64_t heads, int64_t depth) {
  KvChain chain;
  Value value = operand;
  while (true) {
    Operation *op = value.getDefiningOp();
    if (!op || !value.hasOneUse())
      return std::nullopt;
    chain.steps.insert(chain.steps.begin(), op);
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
      ArrayRef<int64_t> to = reshape.getType().getShape();
      auto linear = reshape.getInput().getDefiningOp<graph::LinearOp>();
      if (!linear || !linear->hasOneUse() || to.size() < 2 || to.back() != depth ||
          to[to.size() - 2] != heads || linear.getType().getShape().back() != heads * depth)
        return std::nullopt;
      chain.linear = linear;
      return chain;
    }
    if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
      value = transpose.getInput();
      continue;
    }
    if (auto rotary = dyn_cast<graph::RotaryOp>(op)) {
      value = rotary.getInput();
      continue;
    }
    return std::nullopt;
  }
}

/// `weight` with its blocks of `block` elements along `axis` repeated.
Value repeatedWeight(OpBuilder &builder, graph::WeightOp weight, int64_t axis, int64_t block,
                     int64_t times) {
  RankedTensorType type = weight.getType();
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] *= times;
  SmallVector<int64_t> stored(type.getShape()), offsets(type.getRank(), 0);
  if (weight.getStoredShape()) {
    stored.assign(weight.getStoredShape()->begin(), weight.getStoredShape()->end());
    offsets.assign(weight.getBoxOffsets()->begin(), weight.getBoxOffsets()->end());
  }
  return builder.create<graph::WeightOp>(
      weight.getLoc(), RankedTensorType::get(shape, type.getElementType()), weight.getNameAttr(),
      weight.getFileAttr(), weight.getOffsetAttr(), weight.getSizeAttr(),
      builder.getDenseI64ArrayAttr(stored), builder.getDenseI64ArrayAttr(offsets),
      weight.getStoredTypeAttr(), builder.getDenseI64ArrayAttr({axis, block, times}),
      weight.getPartOffsetsAttr());
}

/// Rebuilds `chain` with `times` copies of each head; the new operand, or
/// null (nothing changed) when a step does not fit.
Value replicate(const KvChain &chain, int64_t depth, int64_t times) {
  graph::LinearOp linear = chain.linear;
  auto weight = linear.getWeight().getDefiningOp<graph::WeightOp>();
  auto bias =
      linear.getBias() ? linear.getBias().getDefiningOp<graph::WeightOp>() : graph::WeightOp();
  // A trained weight's repeated copy would be storage the update never
  // writes, and the copies' gradients would not be summed.
  auto trained = [](graph::WeightOp op) { return op && op->hasAttr(graph::kTrainAttrName); };
  if (!weight || weight.getRepeatBlocks() || (linear.getBias() && !bias) || trained(weight) ||
      trained(bias))
    return {};
  OpBuilder builder(linear);
  int64_t outAxis = linear.getTransposeWeight() ? 0 : 1;
  SmallVector<Value> operands = {linear.getInput(),
                                 repeatedWeight(builder, weight, outAxis, depth, times)};
  if (bias)
    operands.push_back(repeatedWeight(builder, bias, 0, depth, times));
  Operation *rebuilt = graph::createInferred(builder, linear.getLoc(), linear->getName(), operands,
                                             linear->getAttrs());
  Value value = rebuilt ? rebuilt->getResult(0) : Value();
  for (Operation *step : chain.steps) {
    if (!value)
      return {};
    builder.setInsertionPoint(step);
    if (auto reshape = dyn_cast<graph::ReshapeOp>(step)) {
      SmallVector<int64_t> shape(reshape.getType().getShape());
      shape[shape.size() - 2] *= times;
      value = builder.create<graph::ReshapeOp>(
          reshape.getLoc(), RankedTensorType::get(shape, reshape.getType().getElementType()),
          value);
      continue;
    }
    // Transposes and rotaries: the same op on the wider input.
    SmallVector<Value> stepOperands(step->getOperands());
    stepOperands[0] = value;
    Operation *widened = graph::createInferred(builder, step->getLoc(), step->getName(),
                                               stepOperands, step->getAttrs());
    value = widened ? widened->getResult(0) : Value();
  }
  return value;
}

void replicateKvHeads(graph::AttentionOp attention, int64_t tp) {
  ArrayRef<int64_t> q = graph::tensorType(attention.getQuery()).getShape();
  ArrayRef<int64_t> k = graph::tensorType(attention.getKey()).getShape();
  ArrayRef<int64_t> v = graph::tensorType(attention.getValue()).getShape();
  if (q.size() < 3 || k.size() != q.size() || v.size() != q.size())
    return;
  int64_t queryHeads = q[q.size() - 3], kvHeads = k[k.size() - 3];
  if (kvHeads >= tp || tp % kvHeads != 0 || queryHeads % tp != 0 || v[v.size() - 3] != kvHeads)
    return;
  // The head dim must sit right before the sequence and depth dims of the
  // projection's [.., heads, depth] view for the heads to be the weight's
  // column blocks.
  std::optional<KvChain> keys = chainOf(attention.getKey(), kvHeads, k.back());
  std::optional<KvChain> values = chainOf(attention.getValue(), kvHeads, v.back());
  if (!keys || !values)
    return;
  int64_t times = tp / kvHeads;
  Value key = replicate(*keys, k.back(), times);
  Value value = key ? replicate(*values, v.back(), times) : Value();
  if (!key || !value)
    return;
  OpBuilder builder(attention);
  SmallVector<Value> operands(attention->getOperands());
  operands[1] = key;
  operands[2] = value;
  auto replaced = builder.create<graph::AttentionOp>(attention.getLoc(), attention.getType(),
                                                     operands, attention->getAttrs());
  attention.replaceAllUsesWith(replaced.getResult());
  attention.erase();
  // The original chains (and weights no one else reads) are dead now.
  for (const KvChain *chain : {&*keys, &*values}) {
    SmallVector<Operation *> dead(chain->steps.rbegin(), chain->steps.rend());
    dead.push_back(chain->linear);
    for (Value operand : chain->linear->getOperands().drop_front())
      if (Operation *weight = operand.getDefiningOp<graph::WeightOp>())
        dead.push_back(weight);
    for (Operation *op : dead)
      if (op->use_empty())
        op->erase();
  }
}

struct ReplicateKvHeadsPass : impl::ReplicateKvHeadsPassBase<ReplicateKvHeadsPass> {
  void runOnOperation() override {
    FailureOr<dist::MeshOp> mesh = findMesh(getOperation());
    if (failed(mesh))
      return signalPassFailure();
    if (!*mesh)
      return;
    MeshShape shape = meshShapeOf(*mesh);
    std::optional<unsigned> tp = shape.axis(rt::kTensorAxis);
    if (!tp || shape.sizes[*tp] < 2)
      return;
    SmallVector<graph::AttentionOp> attentions;
    getOperation().walk([&](graph::AttentionOp op) { attentions.push_back(op); });
    for (graph::AttentionOp attention : attentions)
      replicateKvHeads(attention, shape.sizes[*tp]);
  }
};

} // namespace
} // namespace shardc::sharding
