//===- RoutedExperts.cpp - expert MLPs, stacked into graph.moe ------------===//
#include "passes/Graph/RoutedExperts.h"

#include "passes/Graph/Matchers.h"

using namespace mlir;

namespace shardc::graph {
namespace {

/// A weight whose bytes are one plain range of its file, as imported.
WeightOp plainWeight(Value value) {
  auto weight = producer<WeightOp>(value);
  if (!weight || weight.getStoredShape() || weight.getStoredType() || weight.getRepeatBlocks() ||
      weight.getPartOffsets())
    return {};
  return weight;
}

/// The activation `op` applies, if it is one an expert may use.
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

/// A linear layer without bias on a plain weight.
LinearOp projection(Value value) {
  auto linear = producer<LinearOp>(value);
  if (!linear || linear.getBias() || !plainWeight(linear.getWeight()))
    return {};
  return linear;
}

} // namespace

bool ExpertMlp::sameShapeAs(const ExpertMlp &other) const {
  if (input != other.input || activation != other.activation || transposed != other.transposed ||
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

Value buildMoe(OpBuilder &builder, Location location, Value input, Value indices, Value gates,
               ArrayRef<ExpertMlp> experts) {
  const ExpertMlp &first = experts.front();
  SmallVector<Value> stacked;
  for (unsigned which = 0; which < first.weights.size(); ++which) {
    WeightOp model = plainWeight(first.weights[which]);
    SmallVector<int64_t> offsets;
    for (const ExpertMlp &expert : experts)
      offsets.push_back(plainWeight(expert.weights[which]).getOffset());
    RankedTensorType type = model.getType();
    SmallVector<int64_t> shape = {int64_t(experts.size())};
    shape.append(type.getShape().begin(), type.getShape().end());
    stacked.push_back(builder.create<WeightOp>(
        model.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        (model.getName() + ".stacked").str(), model.getFile(), model.getOffset(),
        model.getSize() * int64_t(experts.size()), DenseI64ArrayAttr(), DenseI64ArrayAttr(),
        TypeAttr(), DenseI64ArrayAttr(), builder.getDenseI64ArrayAttr(offsets)));
  }
  SmallVector<Value> operands = {input, indices, gates};
  operands.append(stacked);
  SmallVector<NamedAttribute> attributes = {
      builder.getNamedAttr("experts", builder.getI64IntegerAttr(int64_t(experts.size()))),
      builder.getNamedAttr("activation", builder.getStringAttr(first.activation)),
      builder.getNamedAttr("transpose_weights", builder.getBoolAttr(first.transposed))};
  auto moe = createIfValid<MoeOp>(builder, location, operands, attributes);
  if (!moe) {
    for (Value weight : stacked)
      weight.getDefiningOp()->erase();
    return {};
  }
  return moe.getResult();
}

} // namespace shardc::graph
