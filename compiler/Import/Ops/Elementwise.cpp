//===- Elementwise.cpp - importers of elementwise ONNX ops ----------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/TensorDecoding.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

template <typename OpTy>
LogicalResult importUnary(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  return node.define(node.create<OpTy>(node.input(0)));
}

template <typename OpTy>
LogicalResult importBinary(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  return node.define(node.create<OpTy>(ValueRange{node.input(0), node.input(1)}));
}

/// Max, Min and Sum take one or more inputs, none optional: fold them pairwise.
template <typename OpTy>
LogicalResult importVariadic(NodeContext &node) {
  if (failed(node.requireInputs(std::max(1u, node.numInputs()))))
    return failure();
  Value result = node.input(0);
  for (unsigned i = 1; i < node.numInputs(); ++i) {
    auto next = node.create<OpTy>(ValueRange{result, node.input(i)});
    if (failed(next))
      return failure();
    result = *next;
  }
  node.setOutput(0, result);
  return success();
}

template <ComparePredicate predicate>
LogicalResult importCompare(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  return node.define(node.create<CompareOp>(
      ValueRange{node.input(0), node.input(1)},
      {node.attr("predicate", ComparePredicateAttr::get(node.context(), predicate))}));
}

LogicalResult importGelu(NodeContext &node) {
  auto approximate = node.stringAttr("approximate", "none");
  if (failed(node.requireInputs(1)) || failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return node.error() << "attribute 'approximate' is '" << *approximate
                        << "'; expected 'none' or 'tanh'";
  return node.define(node.create<GeluOp>(node.input(0),
                                    {node.boolAttr("approximate_tanh", *approximate == "tanh")}));
}

/// Swish(x) = x * sigmoid(alpha * x); alpha = 1 is SiLU.
LogicalResult importSwish(NodeContext &node) {
  auto alpha = node.floatAttr("alpha", 1.0);
  if (failed(node.requireInputs(1)) || failed(alpha))
    return failure();
  Value x = node.input(0);
  FailureOr<Value> result;
  if (*alpha == 1.0) {
    result = node.create<SiluOp>(x);
  } else {
    auto factor = node.scalar(node.inputType(0).getElementType(), *alpha);
    auto scaled = succeeded(factor) ? node.create<MulOp>(ValueRange{x, *factor}) : noValue();
    auto gate = succeeded(scaled) ? node.create<SigmoidOp>(*scaled) : noValue();
    result = succeeded(gate) ? node.create<MulOp>(ValueRange{x, *gate}) : noValue();
  }
  return node.define(result);
}

LogicalResult importIsInf(NodeContext &node) {
  auto positive = node.flagAttr("detect_positive", true);
  auto negative = node.flagAttr("detect_negative", true);
  if (failed(node.requireInputs(1)) || failed(positive) || failed(negative))
    return failure();
  return node.define(
      node.create<IsInfOp>(node.input(0), {node.boolAttr("detect_positive", *positive),
                                           node.boolAttr("detect_negative", *negative)}));
}

/// fmod=1 truncates the quotient (C's fmod), fmod=0 floors it (Python's %).
/// Before opset 28 ONNX defines fmod=0 only for integers; Mod-28 gives it a
/// meaning on floats too, which the graph op implements.
LogicalResult importMod(NodeContext &node) {
  auto fmod = node.flagAttr("fmod", false);
  if (failed(node.requireInputs(2)) || failed(fmod))
    return failure();
  Type element = node.inputType(0).getElementType();
  if (!*fmod && isa<FloatType>(element) && node.opset() < 28)
    return node.error() << "Mod with fmod=0 takes only integer inputs before opset 28; expected "
                        << "fmod=1 for " << element << " inputs, got fmod=0 (opset " << node.opset()
                        << ")";
  return node.define(
      node.create<ModOp>(ValueRange{node.input(0), node.input(1)}, {node.boolAttr("fmod", *fmod)}));
}

LogicalResult importCast(NodeContext &node) {
  auto to = node.intAttr("to", 0);
  if (failed(node.requireInputs(1)) || failed(to))
    return failure();
  Type element = elementTypeOf(static_cast<int32_t>(*to), node.context());
  if (!element)
    return node.error() << "cannot cast to " << dataTypeName(static_cast<int32_t>(*to))
                        << "; expected a numeric or boolean type";
  auto type = RankedTensorType::get(node.inputType(0).getShape(), element);
  return node.define(node.createTyped<CastOp>(type, node.input(0)));
}

/// Clip: max with the lower bound, then min with the upper one (so a lower
/// bound above the upper gives the upper everywhere, as ONNX defines it).
/// Each bound is optional: an attribute before opset 11 (a float), an input
/// from it (a scalar of the input's type); an absent one does not clip.
LogicalResult importClip(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  FailureOr<Value> result = node.input(0);
  auto bound = [&](unsigned index, StringRef attribute) -> FailureOr<Value> {
    if (node.opset() >= 11)
      return node.hasInput(index) ? FailureOr<Value>(node.input(index)) : FailureOr<Value>(Value());
    if (!node.attribute(attribute))
      return Value();
    auto value = node.floatAttr(attribute, 0.0);
    if (failed(value))
      return failure();
    return node.scalar(node.inputType(0).getElementType(), *value);
  };
  FailureOr<Value> low = bound(1, "min"), high = bound(2, "max");
  if (failed(low) || failed(high))
    return failure();
  if (*low)
    result = node.create<MaxOp>(ValueRange{*result, *low});
  if (succeeded(result) && *high)
    result = node.create<MinOp>(ValueRange{*result, *high});
  return node.define(result);
}

LogicalResult importWhere(NodeContext &node) {
  if (failed(node.requireInputs(3)))
    return failure();
  return node.define(node.create<WhereOp>(ValueRange{node.input(0), node.input(1), node.input(2)}));
}

} // namespace

void registerElementwiseImporters(OpImporterMap &map) {
  map["Add"] = {importBinary<AddOp>, 7};
  map["Sub"] = {importBinary<SubOp>, 7};
  map["Mul"] = {importBinary<MulOp>, 7};
  map["Div"] = {importBinary<DivOp>, 7};
  map["Pow"] = {importBinary<PowOp>, 7};
  map["And"] = {importBinary<AndOp>, 7};
  map["Or"] = {importBinary<OrOp>, 7};
  map["Max"] = {importVariadic<MaxOp>, 8};
  map["Min"] = {importVariadic<MinOp>, 8};
  map["Sum"] = {importVariadic<AddOp>, 8};
  map["Equal"] = {importCompare<ComparePredicate::eq>, 7};
  map["Less"] = {importCompare<ComparePredicate::lt>, 7};
  map["LessOrEqual"] = {importCompare<ComparePredicate::le>, 12};
  map["Greater"] = {importCompare<ComparePredicate::gt>, 7};
  map["GreaterOrEqual"] = {importCompare<ComparePredicate::ge>, 12};
  map["Neg"] = {importUnary<NegOp>, 6};
  map["Abs"] = {importUnary<AbsOp>, 6};
  map["Sqrt"] = {importUnary<SqrtOp>, 6};
  map["Reciprocal"] = {importUnary<ReciprocalOp>, 6};
  map["Exp"] = {importUnary<ExpOp>, 6};
  map["Log"] = {importUnary<LogOp>, 6};
  map["Cos"] = {importUnary<CosOp>, 7};
  map["Sin"] = {importUnary<SinOp>, 7};
  map["Erf"] = {importUnary<ErfOp>, 9};
  map["Tanh"] = {importUnary<TanhOp>, 6};
  map["Sigmoid"] = {importUnary<SigmoidOp>, 6};
  map["Relu"] = {importUnary<ReluOp>, 6};
  map["Clip"] = {importClip, 6};
  map["Not"] = {importUnary<NotOp>, 1};
  map["Floor"] = {importUnary<FloorOp>, 6};
  map["Ceil"] = {importUnary<CeilOp>, 6};
  map["Round"] = {importUnary<RoundOp>, 11};
  map["Sign"] = {importUnary<SignOp>, 9};
  map["IsNaN"] = {importUnary<IsNanOp>, 9};
  map["IsInf"] = {importIsInf, 10};
  map["Mod"] = {importMod, 10};
  map["Gelu"] = {importGelu, 20};
  map["Swish"] = {importSwish, 24};
  map["Cast"] = {importCast, 6};
  map["Where"] = {importWhere, 9};
}

} // namespace shardc::import
