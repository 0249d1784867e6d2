//===- NodeContext.cpp - what an op importer sees of its ONNX node --------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/GraphImporter.h"
#include "compiler/Import/WeightReader.h"

#include "dialects/Graph/ConstantConversion.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Matchers.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include "mlir/IR/Verifier.h"

using namespace mlir;
using shardc::constfold::HostTensor;

namespace shardc::import {

NodeContext::NodeContext(GraphImporter &importer, const onnx::NodeProto &node, Location location,
                         int64_t opset)
    : importer_(importer), node_(node), location_(location), opset_(opset) {}

OpBuilder &NodeContext::builder() { return importer_.builder(); }

bool NodeContext::hasInput(unsigned index) const {
  return index < static_cast<unsigned>(node_.input_size()) && !node_.input(index).empty();
}

Value NodeContext::input(unsigned index) const { return importer_.lookup(node_.input(index)); }

RankedTensorType NodeContext::inputType(unsigned index) const {
  return graph::tensorType(input(index));
}

LogicalResult NodeContext::requireInputs(unsigned count) const {
  for (unsigned i = 0; i < count; ++i)
    if (!hasInput(i))
      return error() << "input " << i << " is missing; expected at least " << count << " inputs";
  return success();
}

FailureOr<HostTensor> NodeContext::constantInput(unsigned index, StringRef role) const {
  if (!hasInput(index))
    return error() << "the " << role << " input (" << index << ") is missing";
  Value value = input(index);
  Attribute attribute;
  if (!matchPattern(value, m_Constant(&attribute))) {
    auto weight = value.getDefiningOp<graph::WeightOp>();
    if (!weight)
      return error() << "the " << role << " input '" << node_.input(index)
                     << "' must be known at compile time; it is computed from the model's inputs";
    auto bytes = readWeight(weight);
    if (failed(bytes))
      return failure();
    attribute = *bytes;
  }
  auto tensor = graph::toHostTensor(attribute);
  if (!tensor)
    return error() << "the " << role << " input '" << node_.input(index)
                   << "' is too large to evaluate at compile time";
  return std::move(*tensor);
}

FailureOr<SmallVector<int64_t>> NodeContext::intsInput(unsigned index, StringRef role) const {
  auto tensor = constantInput(index, role);
  if (failed(tensor))
    return failure();
  if (constfold::isFloat(tensor->type))
    return error() << "the " << role << " input must hold integers";
  return SmallVector<int64_t>(tensor->ints.begin(), tensor->ints.end());
}

FailureOr<int64_t> NodeContext::integerInput(unsigned index, StringRef role) const {
  auto values = intsInput(index, role);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return error() << "the " << role << " input must hold one value; got " << values->size();
  return values->front();
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attribute : node_.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

namespace {
const char *attributeKind(int type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT: return "a float";
  case onnx::AttributeProto::INT: return "an int";
  case onnx::AttributeProto::STRING: return "a string";
  case onnx::AttributeProto::TENSOR: return "a tensor";
  case onnx::AttributeProto::INTS: return "a list of ints";
  case onnx::AttributeProto::FLOATS: return "a list of floats";
  default: return "another kind of attribute";
  }
}
} // namespace

#define SHARDC_CHECK_ATTRIBUTE_KIND(ATTRIBUTE, KIND)                                          \
  if ((ATTRIBUTE)->type() != onnx::AttributeProto::KIND)                                     \
    return error() << "attribute '" << (ATTRIBUTE)->name() << "' must be "                  \
                   << attributeKind(onnx::AttributeProto::KIND) << "; got "                 \
                   << attributeKind((ATTRIBUTE)->type());

FailureOr<int64_t> NodeContext::intAttr(StringRef name, int64_t fallback) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return fallback;
  SHARDC_CHECK_ATTRIBUTE_KIND(found, INT)
  return found->i();
}

FailureOr<double> NodeContext::floatAttr(StringRef name, double fallback) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return fallback;
  SHARDC_CHECK_ATTRIBUTE_KIND(found, FLOAT)
  // ONNX float attributes are float32: widen the shortest decimal that
  // round-trips (0.001f -> 0.001, not 0.0010000000474974513), which is the
  // same float32 and reads as the number the model's author wrote.
  float value = found->f();
  for (int digits = 1; digits < 9; ++digits) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*g", digits, static_cast<double>(value));
    double candidate = std::strtod(text, nullptr);
    if (static_cast<float>(candidate) == value)
      return candidate;
  }
  return static_cast<double>(value);
}

FailureOr<std::string> NodeContext::stringAttr(StringRef name, StringRef fallback) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return fallback.str();
  SHARDC_CHECK_ATTRIBUTE_KIND(found, STRING)
  return found->s();
}

FailureOr<std::optional<SmallVector<int64_t>>> NodeContext::intsAttr(StringRef name) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return std::optional<SmallVector<int64_t>>();
  SHARDC_CHECK_ATTRIBUTE_KIND(found, INTS)
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(found->ints().begin(), found->ints().end()));
}
#undef SHARDC_CHECK_ATTRIBUTE_KIND

FailureOr<bool> NodeContext::flagAttr(StringRef name, bool fallback) const {
  auto value = intAttr(name, fallback ? 1 : 0);
  if (failed(value))
    return failure();
  if (*value != 0 && *value != 1)
    return error() << "attribute '" << name << "' is " << *value << "; expected 0 or 1";
  return *value == 1;
}

LogicalResult NodeContext::rejectAttr(StringRef name, int64_t supportedValue) const {
  auto value = intAttr(name, supportedValue);
  if (failed(value))
    return failure();
  if (*value != supportedValue)
    return error() << "attribute '" << name << "' = " << *value
                   << " is not supported; expected " << supportedValue;
  return success();
}

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank, StringRef what) const {
  if (axis < -rank || axis >= rank)
    return error() << what << " " << axis << " is out of range; expected " << -rank
                   << " <= " << what << " < " << rank;
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> NodeContext::normalizeAxes(ArrayRef<int64_t> axes,
                                                           int64_t rank) const {
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    auto resolved = normalizeAxis(axis, rank);
    if (failed(resolved))
      return failure();
    if (llvm::is_contained(normalized, *resolved))
      return error() << "axis " << axis << " is repeated in " << graph::formatShape(axes);
    normalized.push_back(*resolved);
  }
  llvm::sort(normalized);
  return normalized;
}

bool NodeContext::hasOutput(unsigned index) const {
  return index < static_cast<unsigned>(node_.output_size()) && !node_.output(index).empty();
}

void NodeContext::setOutput(unsigned index, Value value) {
  if (hasOutput(index))
    importer_.define(node_.output(index), value);
}

LogicalResult NodeContext::define(FailureOr<Value> result, unsigned index) {
  if (failed(result))
    return failure();
  setOutput(index, *result);
  return success();
}

LogicalResult NodeContext::rejectOutputsFrom(unsigned index) const {
  for (unsigned i = index; i < static_cast<unsigned>(node_.output_size()); ++i)
    if (hasOutput(i))
      return error() << "output " << i << " ('" << node_.output(i)
                     << "') is not supported; expected only the first " << index;
  return success();
}

FailureOr<SmallVector<Value>> NodeContext::finish(OperationState &state) {
  Operation *op = builder().create(state);
  if (failed(verify(op))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> folded;
  if (succeeded(builder().tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded;
  }
  return SmallVector<Value>(op->getResults());
}

Value NodeContext::constant(DenseElementsAttr value) {
  return builder().create<graph::ConstantOp>(location_, value);
}

FailureOr<Value> NodeContext::constant(const HostTensor &value) {
  DenseElementsAttr attribute = graph::toElementsAttr(value, context());
  if (!attribute)
    return error() << "cannot represent a constant of shape " << graph::formatShape(value.shape);
  return constant(attribute);
}

FailureOr<Value> NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  if (isa<FloatType>(elementType))
    return constant(DenseElementsAttr::get(type, builder().getFloatAttr(elementType, value)));
  // Integer (and bool) tensors take only whole numbers their type can hold.
  unsigned width = elementType.getIntOrFloatBitWidth();
  bool whole = std::isfinite(value) && std::trunc(value) == value;
  double limit = width >= 64 ? 9.2e18 : std::ldexp(1.0, static_cast<int>(width));
  if (!whole || std::fabs(value) >= limit)
    return error() << "the constant " << value << " has no exact value of the input's type "
                   << elementType;
  return constant(DenseElementsAttr::get(
      type, builder().getIntegerAttr(elementType, static_cast<int64_t>(value))));
}

FailureOr<Value> NodeContext::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, graph::tensorType(value).getElementType());
  return createTyped<graph::ReshapeOp>(type, value);
}

FailureOr<Value> NodeContext::transpose(Value value, ArrayRef<int64_t> perm) {
  return create<graph::TransposeOp>(value, {arrayAttr("perm", perm)});
}

} // namespace shardc::import
