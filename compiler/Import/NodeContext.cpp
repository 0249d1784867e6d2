//===- NodeContext.cpp - what an op importer sees of its ONNX node --------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/GraphImporter.h"
#include "dialects/Graph/WeightBytes.h"

#include "dialects/Graph/ConstantConversion.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/SetVector.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using shardc::constfold::HostTensor;

namespace shardc::import {

NodeContext::NodeContext(GraphImporter &importer, const onnx::NodeProto &node, Location location,
                         int64_t opset)
    : importer_(importer), node_(node), location_(location), opset_(opset) {}

OpBuilder &NodeContext::builder() { return importer_.builder(); }
const ImportOptions &NodeContext::options() const { return importer_.options(); }

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
  return constantValue(input(index), role, node_.input(index));
}

namespace {
/// The names of the model inputs `value` is computed from, so an error can
/// say which one to fix with --constant-input; empty when `value` is one.
std::string modelInputsBehind(Value value) {
  if (isa<BlockArgument>(value))
    return "";
  llvm::SetVector<Value> seen;
  SmallVector<Value> pending = {value};
  std::string names;
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    if (!seen.insert(next))
      continue;
    if (auto argument = dyn_cast<BlockArgument>(next)) {
      auto function = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
      auto name = function
                      ? function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), graph::kNameAttrName)
                      : StringAttr();
      if (name)
        names += (names.empty() ? " '" : ", '") + name.getValue().str() + "'";
      continue;
    }
    if (Operation *op = next.getDefiningOp())
      pending.append(op->operand_begin(), op->operand_end());
  }
  return names;
}
} // namespace

FailureOr<HostTensor> NodeContext::constantValue(Value value, StringRef role,
                                                 StringRef name) const {
  Attribute attribute;
  if (!matchPattern(value, m_Constant(&attribute))) {
    auto weight = value.getDefiningOp<graph::WeightOp>();
    if (!weight)
      return error() << "the " << role << " input '" << name
                     << "' must be known at compile time; it is computed from the model's inputs"
                     << modelInputsBehind(value);
    auto bytes = graph::readWeight(weight);
    if (failed(bytes))
      return failure();
    attribute = *bytes;
  }
  auto tensor = graph::toHostTensor(attribute);
  if (!tensor)
    return error() << "the " << role << " input '" << name
                   << "' is too large to evaluate at compile time";
  return std::move(*tensor);
}

Binding NodeContext::binding(unsigned index) const {
  return importer_.lookupBinding(node_.input(index));
}

FailureOr<TensorSequence> NodeContext::sequenceInput(unsigned index) const {
  if (!hasInput(index))
    return error() << "the sequence input (" << index << ") is missing";
  Binding found = binding(index);
  if (!found.isSequence())
    return error() << "input " << index << " ('" << node_.input(index)
                   << "') is a tensor; expected a sequence";
  return *found.sequence;
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

void NodeContext::setBinding(unsigned index, Binding binding) {
  if (hasOutput(index))
    importer_.define(node_.output(index), std::move(binding));
}

FailureOr<const onnx::GraphProto *> NodeContext::graphAttr(StringRef name) const {
  const onnx::AttributeProto *found = attribute(name);
  if (!found)
    return error() << "attribute '" << name << "' is missing";
  if (found->type() != onnx::AttributeProto::GRAPH || !found->has_g())
    return error() << "attribute '" << name << "' must be a graph";
  return &found->g();
}

FailureOr<SmallVector<Binding>> NodeContext::importSubgraph(const onnx::GraphProto &graph,
                                                            ArrayRef<Binding> inputs) {
  return importer_.importSubgraph(graph, inputs, location_);
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
