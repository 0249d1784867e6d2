//===- Padding.cpp - importer of ONNX Pad ---------------------------------===//
//
// Pad is spelled per padded axis as a concat: constant blocks (the fill
// value broadcast) or slices of the input itself for the reflect, edge and
// wrap modes, after slicing off what negative pads remove. The amounts must
// be known at compile time; the constant value may be computed.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

FailureOr<PadMode> padMode(NodeContext &node) {
  auto name = node.stringAttr("mode", "constant");
  if (failed(name))
    return failure();
  // Wrap arrived in opset 19; older opsets know the first three.
  bool wrap = node.opset() >= 19;
  if (*name == "constant")
    return PadMode::Constant;
  if (*name == "reflect")
    return PadMode::Reflect;
  if (*name == "edge")
    return PadMode::Edge;
  if (*name == "wrap" && wrap)
    return PadMode::Wrap;
  return node.error() << "attribute 'mode' is '" << *name << "'; expected 'constant', 'reflect'"
                      << (wrap ? ", 'edge' or 'wrap'" : " or 'edge'") << " in opset "
                      << node.opset();
}

/// The fill of constant mode as a rank-0 tensor of the data's element type:
/// the `value` attribute before opset 11, then the optional constant_value input.
FailureOr<Value> fillValue(NodeContext &node, Type element) {
  if (node.opset() < 11) {
    auto value = node.floatAttr("value", 0.0);
    if (failed(value))
      return failure();
    return node.scalar(element, *value);
  }
  if (!node.hasInput(2))
    return node.scalar(element, 0.0);
  RankedTensorType type = node.inputType(2);
  if (type.getElementType() != element)
    return node.error() << "the constant value has element type " << type.getElementType()
                        << "; expected the data's " << element;
  if (type.getNumElements() != 1)
    return node.error() << "the constant value has shape " << formatShape(type.getShape())
                        << "; expected a scalar";
  return reshapeTo(node, node.input(2), {});
}

LogicalResult importPad(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto mode = padMode(node);
  if (failed(mode))
    return failure();
  RankedTensorType type = node.inputType(0);
  int64_t rank = type.getRank();

  SmallVector<int64_t> pads;
  if (node.opset() < 11) {
    auto given = node.intsAttr("pads");
    if (failed(given))
      return failure();
    if (!*given)
      return node.error() << "attribute 'pads' is missing";
    pads = **given;
  } else {
    auto given = node.intsInput(1, "pads");
    if (failed(given))
      return failure();
    pads = *given;
  }
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (node.opset() >= 18 && node.hasInput(3)) {
    auto given = node.intsInput(3, "axes");
    if (failed(given))
      return failure();
    axes.clear();
    for (int64_t axis : *given) {
      auto resolved = node.normalizeAxis(axis, rank);
      if (failed(resolved))
        return failure();
      if (llvm::is_contained(axes, *resolved))
        return node.error() << "axis " << axis << " is repeated in " << formatShape(*given);
      axes.push_back(*resolved);
    }
  }
  if (pads.size() != 2 * axes.size())
    return node.error() << "pads has " << pads.size() << " values; expected 2 x " << axes.size()
                        << " (a begin and an end per padded axis)";

  Value fill;
  if (*mode == PadMode::Constant) {
    auto value = fillValue(node, type.getElementType());
    if (failed(value))
      return failure();
    fill = *value;
  }
  Value result = node.input(0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    auto padded = padAxis(node, result, axis, pads[i], pads[i + axes.size()], *mode, fill);
    if (failed(padded))
      return failure();
    result = *padded;
  }
  node.setOutput(0, result);
  return success();
}

} // namespace

void registerPadImporters(OpImporterMap &map) { map["Pad"] = {importPad, 2}; }

} // namespace shardc::import
