//===- Reductions.cpp - importers of ONNX reductions, Softmax and TopK ----===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

#include "dialects/Graph/TypeUtils.h"

#include <type_traits>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// The axes a Reduce* node reduces over, in the graph dialect's form (sorted,
/// non-negative, never empty); nullopt when the node is an identity
/// (no axes and noop_with_empty_axes).
FailureOr<std::optional<SmallVector<int64_t>>> reductionAxes(NodeContext &node) {
  auto noop = node.intAttr("noop_with_empty_axes", 0);
  if (failed(noop))
    return failure();
  SmallVector<int64_t> axes;
  if (node.hasInput(1)) {
    auto given = node.intsInput(1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    auto given = node.intsAttr("axes");
    if (failed(given))
      return failure();
    if (*given)
      axes = **given;
  }
  int64_t rank = node.inputType(0).getRank();
  if (axes.empty()) {
    if (*noop)
      return std::optional<SmallVector<int64_t>>();
    return std::optional<SmallVector<int64_t>>(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  }
  auto normalized = node.normalizeAxes(axes, rank);
  if (failed(normalized))
    return failure();
  return std::optional<SmallVector<int64_t>>(*normalized);
}

template <typename OpTy, bool squareFirst = false>
LogicalResult importReduce(NodeContext &node) {
  auto keepdims = node.intAttr("keepdims", 1);
  if (failed(node.requireInputs(1)) || failed(keepdims))
    return failure();
  auto axes = reductionAxes(node);
  if (failed(axes))
    return failure();
  Value input = node.input(0);
  if (squareFirst) {
    auto squared = node.create<MulOp>(ValueRange{input, input});
    if (failed(squared))
      return failure();
    input = *squared;
  }
  if (!*axes) {
    node.setOutput(0, input);
    return success();
  }
  SmallVector<NamedAttribute> attributes = {node.arrayAttr("axes", **axes),
                                            node.boolAttr("keepdims", *keepdims != 0)};
  // ReduceMax/ReduceMin take bool from opset 20 (any / all). The kernels
  // reduce numbers only, so bool goes through uint8, whose empty max (0) and
  // empty min (255) cast back to ONNX's false and true.
  RankedTensorType type = graph::tensorType(input);
  if (type.getElementType().isInteger(1) &&
      (std::is_same_v<OpTy, ReduceMaxOp> || std::is_same_v<OpTy, ReduceMinOp>)) {
    Type byte = node.builder().getIntegerType(8, /*isSigned=*/false);
    auto bytes = node.createTyped<CastOp>(type.clone(byte), input);
    auto reduced = succeeded(bytes) ? node.create<OpTy>(*bytes, attributes) : noValue();
    if (failed(reduced))
      return failure();
    return node.define(node.createTyped<CastOp>(
        graph::tensorType(*reduced).clone(type.getElementType()), *reduced));
  }
  return node.define(node.create<OpTy>(input, attributes));
}

LogicalResult importSoftmax(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", -1);
  if (failed(node.requireInputs(1)) || failed(axisAttr))
    return failure();
  auto axis = node.normalizeAxis(*axisAttr, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return node.define(node.create<SoftmaxOp>(node.input(0), {node.i64Attr("axis", *axis)}));
}

LogicalResult importTopK(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", -1);
  auto largest = node.intAttr("largest", 1);
  auto sorted = node.intAttr("sorted", 1);
  if (failed(node.requireInputs(2)) || failed(axisAttr) || failed(largest) || failed(sorted))
    return failure();
  auto k = node.integerInput(1, "k");
  auto axis = succeeded(k) ? node.normalizeAxis(*axisAttr, node.inputType(0).getRank())
                           : FailureOr<int64_t>(failure());
  if (failed(axis))
    return failure();
  auto results = node.createMulti<TopKOp>(
      node.input(0), {node.i64Attr("k", *k), node.i64Attr("axis", *axis),
                      node.boolAttr("largest", *largest != 0),
                      node.boolAttr("sorted", *sorted != 0)});
  if (failed(results))
    return failure();
  node.setOutput(0, (*results)[0]);
  node.setOutput(1, (*results)[1]);
  return success();
}

/// The axis is an input, which shardc needs at compile time (a static
/// program); position ids (CumSum over the mask) always have a constant one.
LogicalResult importCumSum(NodeContext &node) {
  auto exclusive = node.flagAttr("exclusive", false);
  auto reverse = node.flagAttr("reverse", false);
  if (failed(node.requireInputs(2)) || failed(exclusive) || failed(reverse))
    return failure();
  auto axisInput = node.integerInput(1, "axis");
  if (failed(axisInput))
    return failure();
  auto axis = node.normalizeAxis(*axisInput, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return node.define(node.create<CumSumOp>(node.input(0), {node.i64Attr("axis", *axis),
                                                           node.boolAttr("exclusive", *exclusive),
                                                           node.boolAttr("reverse", *reverse)}));
}

} // namespace

void registerReductionImporters(OpImporterMap &map) {
  map["ReduceSum"] = {importReduce<ReduceSumOp>, 1};
  map["ReduceMean"] = {importReduce<ReduceMeanOp>, 1};
  map["ReduceMax"] = {importReduce<ReduceMaxOp>, 1};
  map["ReduceMin"] = {importReduce<ReduceMinOp>, 1};
  map["ReduceSumSquare"] = {importReduce<ReduceSumOp, /*squareFirst=*/true>, 1};
  map["Softmax"] = {importSoftmax, 13};
  map["TopK"] = {importTopK, 10};
  map["CumSum"] = {importCumSum, 11};
}

} // namespace shardc::import
