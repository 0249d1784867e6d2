//===- Normalization.cpp - importers of LayerNormalization, RMSNormalization ===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

struct NormAttributes {
  int64_t axis;
  double epsilon;
};

FailureOr<NormAttributes> normAttributes(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", -1);
  auto epsilon = node.floatAttr("epsilon", 1e-5);
  if (failed(node.requireInputs(2)) || failed(axisAttr) || failed(epsilon))
    return failure();
  auto axis = node.normalizeAxis(*axisAttr, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return NormAttributes{*axis, *epsilon};
}

/// LayerNormalization's optional Mean and InvStdDev outputs, spelled out:
/// they are training-time byproducts the fused op does not expose.
LogicalResult defineStatistics(NodeContext &node, const NormAttributes &norm) {
  if (!node.hasOutput(1) && !node.hasOutput(2))
    return success();
  Value x = node.input(0);
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(norm.axis, node.inputType(0).getRank()));
  SmallVector<NamedAttribute> reduce = {node.arrayAttr("axes", axes),
                                        node.boolAttr("keepdims", true)};
  auto mean = node.create<ReduceMeanOp>(x, reduce);
  auto centered = succeeded(mean) ? node.create<SubOp>(ValueRange{x, *mean}) : noValue();
  auto squared =
      succeeded(centered) ? node.create<MulOp>(ValueRange{*centered, *centered}) : noValue();
  auto variance = succeeded(squared) ? node.create<ReduceMeanOp>(*squared, reduce) : noValue();
  Type element = node.inputType(0).getElementType();
  auto epsilon = succeeded(variance) ? node.scalar(element, norm.epsilon) : noValue();
  auto shifted =
      succeeded(epsilon) ? node.create<AddOp>(ValueRange{*variance, *epsilon}) : noValue();
  auto inverse = succeeded(shifted) ? node.create<RsqrtOp>(*shifted) : noValue();
  if (failed(inverse))
    return failure();
  node.setOutput(1, *mean);
  node.setOutput(2, *inverse);
  return success();
}

LogicalResult importLayerNormalization(NodeContext &node) {
  auto norm = normAttributes(node);
  if (failed(norm))
    return failure();
  SmallVector<Value> operands = {node.input(0), node.input(1)};
  if (node.hasInput(2))
    operands.push_back(node.input(2));
  auto result = node.create<LayerNormOp>(
      operands, {node.i64Attr("axis", norm->axis), node.f64Attr("epsilon", norm->epsilon)});
  if (failed(result) || failed(defineStatistics(node, *norm)))
    return failure();
  node.setOutput(0, *result);
  return success();
}

LogicalResult importRmsNormalization(NodeContext &node) {
  auto norm = normAttributes(node);
  if (failed(norm))
    return failure();
  return node.define(node.create<RmsNormOp>(
      ValueRange{node.input(0), node.input(1)},
      {node.i64Attr("axis", norm->axis), node.f64Attr("epsilon", norm->epsilon)}));
}

} // namespace

void registerNormalizationImporters(OpImporterMap &map) {
  map["LayerNormalization"] = {importLayerNormalization, 17};
  map["RMSNormalization"] = {importRmsNormalization, 23};
}

} // namespace shardc::import
