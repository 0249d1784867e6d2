//===- Sources.cpp - importers of ONNX ops that produce constants ---------===//
//
// Constant, ConstantOfShape, Range, Shape and Size always become graph.constant:
// with every dim bound their values are known at compile time.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/TensorDecoding.h"

#include "dialects/Graph/ConstEval/ConstEval.h"
#include "dialects/Graph/TypeUtils.h"

using namespace mlir;

namespace shardc::import {
namespace {

LogicalResult importConstant(NodeContext &node) {
  const onnx::AttributeProto *value = nullptr;
  for (const onnx::AttributeProto &attribute : node.node().attribute())
    if (attribute.name().rfind("value", 0) == 0 || attribute.name() == "sparse_value")
      value = &attribute;
  if (!value)
    return node.error() << "has no value attribute";
  OpBuilder &b = node.builder();
  auto define = [&](DenseElementsAttr attribute) {
    node.setOutput(0, node.constant(attribute));
    return success();
  };
  const std::string &name = value->name();
  if (name == "value") {
    auto tensor = decodeTensor(value->t(), node.location());
    return failed(tensor) ? failure() : define(*tensor);
  }
  if (name == "value_float")
    return define(DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), value->f()));
  if (name == "value_int")
    return define(DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                         static_cast<int64_t>(value->i())));
  if (name == "value_floats") {
    SmallVector<float> values(value->floats().begin(), value->floats().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
    return define(DenseElementsAttr::get(type, ArrayRef<float>(values)));
  }
  if (name == "value_ints") {
    SmallVector<int64_t> values(value->ints().begin(), value->ints().end());
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
    return define(DenseElementsAttr::get(type, ArrayRef<int64_t>(values)));
  }
  return node.error() << "attribute '" << name
                      << "' is not supported; expected a numeric tensor value";
}

LogicalResult importConstantOfShape(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto shape = node.intsInput(0, "shape");
  if (failed(shape))
    return failure();
  for (int64_t dim : *shape)
    if (dim < 0)
      return node.error() << "shape " << graph::formatShape(*shape) << " has a negative size";
  Attribute element = node.builder().getF32FloatAttr(0.0f);
  if (const onnx::AttributeProto *value = node.attribute("value")) {
    auto tensor = decodeTensor(value->t(), node.location());
    if (failed(tensor))
      return failure();
    if (tensor->getNumElements() != 1)
      return node.error() << "attribute 'value' must hold one element; got "
                          << tensor->getNumElements();
    element = *tensor->value_begin<Attribute>();
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(element).getType());
  node.setOutput(0, node.constant(DenseElementsAttr::get(type, element)));
  return success();
}

LogicalResult importRange(NodeContext &node) {
  if (failed(node.requireInputs(3)))
    return failure();
  auto start = node.constantInput(0, "start");
  using Tensor = FailureOr<constfold::HostTensor>;
  auto limit = succeeded(start) ? node.constantInput(1, "limit") : Tensor(failure());
  auto delta = succeeded(limit) ? node.constantInput(2, "delta") : Tensor(failure());
  if (failed(delta))
    return failure();
  auto values = constfold::range(*start, *limit, *delta);
  if (!values)
    return node.error() << values.message();
  return node.define(node.constant(*values));
}

LogicalResult importShape(NodeContext &node) {
  auto startAttr = node.intAttr("start", 0);
  auto endAttr = node.intAttr("end", INT64_MAX);
  if (failed(node.requireInputs(1)) || failed(startAttr) || failed(endAttr))
    return failure();
  ArrayRef<int64_t> dims = node.inputType(0).getShape();
  int64_t rank = dims.size();
  // Opset 15: start/end count from the back when negative and clamp to [0, rank].
  auto resolve = [rank](int64_t bound) {
    return std::clamp<int64_t>(bound < 0 ? bound + rank : bound, 0, rank);
  };
  int64_t start = resolve(*startAttr), end = std::max(start, resolve(*endAttr));
  SmallVector<int64_t> values(dims.begin() + start, dims.begin() + end);
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    node.builder().getI64Type());
  node.setOutput(0, node.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(values))));
  return success();
}

LogicalResult importSize(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto type = RankedTensorType::get({}, node.builder().getI64Type());
  node.setOutput(0, node.constant(DenseElementsAttr::get(
                        type, static_cast<int64_t>(node.inputType(0).getNumElements()))));
  return success();
}

} // namespace

void registerSourceImporters(OpImporterMap &map) {
  map["Constant"] = {importConstant, 1};
  map["ConstantOfShape"] = {importConstantOfShape, 9};
  map["Range"] = {importRange, 11};
  map["Shape"] = {importShape, 1};
  map["Size"] = {importSize, 1};
}

} // namespace shardc::import
