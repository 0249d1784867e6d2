//===- RoutedExperts.cpp - expert MLPs, stacked into graph.moe ------------===//
#include "passes/Graph/RoutedExperts.h"

#include "dialects/Graph/WeightBox.h"
#include "dialects/Graph/WeightParts.h"
#include "passes/Graph/Matchers.h"

using namespace mlir;

namespace shardc::graph {
WeightOp plainWeight(Value value) {
  auto weight = producer<WeightOp>(value);
  if (!weight || weight.getStoredShape() || weight.getStoredType() || weight.getRepeatBlocks() ||
      weight.getPartOffsets())
    return {};
  return weight;
}

std::optional<StringRef> activationOf(Operation *op) {
  if (!op)
    return std::nullopt;
  if (isa<SiluOp>(op))
    return StringRef("silu");
  if (isa<ReluOp>(op))
    return StringRef("relu");
  if (auto gelu = dyn_cast<GeluOp>(op))
    return StringRef(gelu.getApproximateTanh() ? "gelu_tanh" : "gelu");
  return std::nullopt;
}

namespace {

/// The index that `op`, a where(i < c, _, i) with c <= 0, passes unchanged
/// when i is not negative; null for other ops.
Value wrapAround(Operation *op) {
  auto where = dyn_cast<WhereOp>(op);
  auto compare = where ? producer<CompareOp>(where.getCondition()) : CompareOp();
  if (!compare)
    return {};
  Value index = where.getFalseValue(), bound;
  if (compare.getPredicate() == ComparePredicate::lt && compare.getLhs() == index)
    bound = compare.getRhs();
  else if (compare.getPredicate() == ComparePredicate::gt && compare.getRhs() == index)
    bound = compare.getLhs();
  std::optional<double> limit = splatValue(bound);
  if (!limit || *limit > 0 || index.getType() != where.getType() ||
      cast<ShapedType>(compare.getType()).getShape() !=
          cast<ShapedType>(where.getType()).getShape())
    return {};
  return index;
}

/// A linear layer without bias on a plain weight.
LinearOp projection(Value value) {
  auto linear = producer<LinearOp>(value);
  if (!linear || linear.getBias() || !plainWeight(linear.getWeight()))
    return {};
  return linear;
}

} // namespace

bool ExpertMlp::sameShapeAs(const ExpertMlp &other) const {
  if (activation != other.activation || transposed != other.transposed ||
      weights.size() != other.weights.size())
    return false;
  for (auto [mine, theirs] : llvm::zip(weights, other.weights))
    if (mine.getType() != theirs.getType() ||
        plainWeight(mine).getFile() != plainWeight(theirs).getFile())
      return false;
  return true;
}

std::optional<ExpertMlp> matchExpertMlp(Value output) {
  LinearOp down = projection(output);
  if (!down)
    return std::nullopt;
  ExpertMlp expert;
  expert.transposed = down.getTransposeWeight();
  Value hidden = down.getInput();
  SmallVector<LinearOp, 2> inner;
  if (auto product = producer<MulOp>(hidden)) {
    // act(x W_gate) * (x W_up), in either order.
    for (unsigned activated : {0u, 1u}) {
      Operation *act = product->getOperand(activated).getDefiningOp();
      std::optional<StringRef> kind = activationOf(act);
      LinearOp gate = kind ? projection(act->getOperand(0)) : LinearOp();
      LinearOp up = projection(product->getOperand(1 - activated));
      if (gate && up) {
        expert.activation = *kind;
        inner = {gate, up};
        break;
      }
    }
  } else if (std::optional<StringRef> kind = activationOf(hidden.getDefiningOp())) {
    if (LinearOp up = projection(hidden.getDefiningOp()->getOperand(0))) {
      expert.activation = *kind;
      inner = {up};
    }
  }
  if (inner.empty())
    return std::nullopt;
  expert.input = inner.front().getInput();
  for (LinearOp linear : inner) {
    if (linear.getInput() != expert.input || linear.getTransposeWeight() != expert.transposed)
      return std::nullopt;
    expert.weights.push_back(linear.getWeight());
  }
  expert.weights.push_back(down.getWeight());
  if (plainWeight(expert.weights.front()).getFile() != plainWeight(down.getWeight()).getFile())
    return std::nullopt;
  return expert;
}

std::optional<RowOrigins> routerEntries(Value value) {
  // The wrap-around passes the index only if what it reads is never
  // negative: the source checked below is top-k indices, and every op on the
  // way only moves them.
  std::optional<RowOrigins> origins = traceRows(value, 1, wrapAround);
  auto topk = origins ? producer<TopKOp>(origins->source) : TopKOp();
  if (!topk || origins->source != topk.getIndices() ||
      int64_t(topk.getAxis()) != topk.getIndices().getType().getRank() - 1 ||
      topk.getIndices().getType().getRank() != 2)
    return std::nullopt;
  return origins;
}

bool coversEachOnce(ArrayRef<int64_t> entries, int64_t count) {
  if (int64_t(entries.size()) != count)
    return false;
  llvm::SmallVector<bool> seen(count, false);
  for (int64_t entry : entries) {
    if (entry < 0 || entry >= count || seen[entry])
      return false;
    seen[entry] = true;
  }
  return true;
}

std::optional<StackedMlp> stackExperts(ArrayRef<ExpertMlp> experts) {
  if (experts.empty() || llvm::any_of(experts, [&](const ExpertMlp &expert) {
        return !expert.sameShapeAs(experts.front());
      }))
    return std::nullopt;
  StackedMlp stacked{{}, experts.front().activation, experts.front().transposed};
  for (unsigned which = 0; which < experts.front().weights.size(); ++which) {
    StackedWeight &weight = stacked.weights.emplace_back();
    for (const ExpertMlp &expert : experts)
      weight.parts.push_back(expert.weights[which]);
  }
  return stacked;
}

namespace {

/// The graph.weight that is `weight` over all the experts.
Value materialize(OpBuilder &builder, const StackedWeight &weight) {
  WeightOp model = plainWeight(weight.parts.front());
  RankedTensorType type = model.getType();
  if (type.getRank() == 3) {
    // The exporter's own stacked weight, or a box of it.
    if (weight.boxDim < 0)
      return model.getResult();
    return weightBox(builder, model, weight.boxDim, weight.boxBegin, weight.boxEnd);
  }
  SmallVector<int64_t> offsets;
  SmallVector<Attribute> names;
  for (Value part : weight.parts) {
    offsets.push_back(plainWeight(part).getOffset());
    names.push_back(plainWeight(part).getNameAttr());
  }
  SmallVector<int64_t> shape = {int64_t(weight.parts.size())};
  shape.append(type.getShape().begin(), type.getShape().end());
  auto stacked = builder.create<WeightOp>(
      model.getLoc(), RankedTensorType::get(shape, type.getElementType()),
      (model.getName() + ".stacked").str(), model.getFile(), model.getOffset(),
      model.getSize() * int64_t(weight.parts.size()), DenseI64ArrayAttr(), DenseI64ArrayAttr(),
      TypeAttr(), DenseI64ArrayAttr(), builder.getDenseI64ArrayAttr(offsets));
  stacked->setAttr(kPartsAttrName, builder.getArrayAttr(names));
  return stacked;
}

/// `value` reshaped to `shape` unless it has it; null when the element
/// counts differ.
Value viewAs(OpBuilder &builder, Location location, Value value, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  auto view = type.clone(shape);
  if (view.getNumElements() != type.getNumElements())
    return {};
  return builder.create<ReshapeOp>(location, view, value);
}

} // namespace

Value buildMoe(OpBuilder &builder, Location location, const RoutedExperts &found) {
  auto indices = cast<RankedTensorType>(found.indices.getType());
  auto input = cast<RankedTensorType>(found.input.getType());
  int64_t tokens = indices.getDimSize(0);
  SmallVector<Operation *> built;
  Value x = viewAs(builder, location, found.input, {tokens, input.getShape().back()});
  Value gates = viewAs(builder, location, found.gates, indices.getShape());
  SmallVector<Value> operands = {x, found.indices, gates};
  for (Value view : {x, gates})
    if (view && view != found.input && view != found.gates)
      built.push_back(view.getDefiningOp());
  for (const StackedWeight &weight : found.experts.weights) {
    operands.push_back(materialize(builder, weight));
    if (operands.back() != weight.parts.front())
      built.push_back(operands.back().getDefiningOp());
  }
  int64_t experts = cast<RankedTensorType>(operands.back().getType()).getDimSize(0);
  SmallVector<NamedAttribute> attributes = {
      builder.getNamedAttr("experts", builder.getI64IntegerAttr(experts)),
      builder.getNamedAttr("activation", builder.getStringAttr(found.experts.activation)),
      builder.getNamedAttr("transpose_weights", builder.getBoolAttr(found.experts.transposed))};
  MoeOp moe;
  if (x && gates)
    moe = createIfValid<MoeOp>(builder, location, operands, attributes);
  if (!moe) {
    for (Operation *op : llvm::reverse(built))
      op->erase();
    return {};
  }
  return moe.getResult();
}

} // namespace shardc::graph
