//===- Indexing.cpp - importers of ONNX ops that index ---------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

#include "mlir/IR/Matchers.h"

#include <limits>
#include <type_traits>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Indices known at compile time must lie in the gathered axis. They are
/// often an arange over an input dim, folded (GPT-2's positions gather rows
/// of a table): a dim bound past the table is reported here, naming the
/// --dim that the indices count up to, not as a shape error deep in the
/// model or an out-of-range read at run time.
LogicalResult checkConstantIndices(NodeContext &node, int64_t axis) {
  DenseIntElementsAttr indices;
  int64_t size = node.inputType(0).getDimSize(axis);
  if (!matchPattern(node.input(1), m_Constant(&indices)) || indices.empty() ||
      ShapedType::isDynamic(size))
    return success();
  int64_t lowest = std::numeric_limits<int64_t>::max();
  int64_t highest = std::numeric_limits<int64_t>::min();
  for (const APInt &index : indices.getValues<APInt>()) {
    lowest = std::min(lowest, index.getSExtValue());
    highest = std::max(highest, index.getSExtValue());
  }
  if (lowest >= -size && highest < size)
    return success();
  int64_t bad = highest >= size ? highest : lowest;
  auto diagnostic = node.error() << "index " << bad << " is out of range for '"
                                 << node.node().input(0) << "', which has " << size
                                 << " entries along axis " << axis;
  // An arange over a dim of N counts up to N - 1.
  if (bad == highest)
    for (const auto &[name, value] : node.options().dims)
      if (value == highest + 1) {
        diagnostic << "; the indices count up to --dim " << name << "=" << value << ": " << name
                   << " must be <= " << size;
        break;
      }
  return diagnostic;
}

/// Gather and GatherElements: data and indices, and an `axis` of data that
/// may count from the end.
template <typename OpTy> LogicalResult importAxisGather(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", 0);
  if (failed(node.requireInputs(2)) || failed(axisAttr))
    return failure();
  auto axis = node.normalizeAxis(*axisAttr, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  if constexpr (std::is_same_v<OpTy, GatherOp>)
    if (failed(checkConstantIndices(node, *axis)))
      return failure();
  return node.define(
      node.create<OpTy>(ValueRange{node.input(0), node.input(1)}, {node.i64Attr("axis", *axis)}));
}

/// ScatterElements' and ScatterND's `reduction` attribute, already read.
FailureOr<ScatterReduction> parseReduction(NodeContext &node, StringRef name) {
  auto reduction = symbolizeScatterReduction(name);
  if (!reduction)
    return node.error() << "attribute 'reduction' is '" << name
                        << "'; expected none, add, mul, max or min";
  return *reduction;
}

LogicalResult importScatterElements(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", 0);
  auto reductionName = node.stringAttr("reduction", "none");
  if (failed(node.requireInputs(3)) || failed(axisAttr) || failed(reductionName))
    return failure();
  auto reduction = parseReduction(node, *reductionName);
  if (failed(reduction))
    return failure();
  auto axis = node.normalizeAxis(*axisAttr, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return node.define(node.create<ScatterElementsOp>(
      ValueRange{node.input(0), node.input(1), node.input(2)},
      {node.i64Attr("axis", *axis),
       node.attr("reduction", ScatterReductionAttr::get(node.context(), *reduction))}));
}

/// batch_dims arrived in opset 12; opset 11's GatherND is batch_dims = 0.
LogicalResult importGatherND(NodeContext &node) {
  auto batchDims = node.intAttr("batch_dims", 0);
  if (failed(node.requireInputs(2)) || failed(batchDims))
    return failure();
  return node.define(node.create<GatherNdOp>(ValueRange{node.input(0), node.input(1)},
                                             {node.i64Attr("batch_dims", *batchDims)}));
}

/// `reduction` arrived in opset 16 (none, add, mul); max and min in 18.
LogicalResult importScatterND(NodeContext &node) {
  auto reductionName = node.stringAttr("reduction", "none");
  if (failed(node.requireInputs(3)) || failed(reductionName))
    return failure();
  auto reduction = parseReduction(node, *reductionName);
  if (failed(reduction))
    return failure();
  if (node.attribute("reduction") && node.opset() < 16)
    return node.error() << "attribute 'reduction' of ScatterND needs opset 16; got opset "
                        << node.opset();
  if ((*reduction == ScatterReduction::max || *reduction == ScatterReduction::min) &&
      node.opset() < 18)
    return node.error() << "reduction '" << *reductionName
                        << "' of ScatterND needs opset 18; expected none, add or mul in opset "
                        << node.opset();
  return node.define(node.create<ScatterNdOp>(
      ValueRange{node.input(0), node.input(1), node.input(2)},
      {node.attr("reduction", ScatterReductionAttr::get(node.context(), *reduction))}));
}

/// The selection's size is data-dependent; graph.nonzero keeps room for every
/// element until shardc-densify-selections makes its uses static.
LogicalResult importNonZero(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  return node.define(node.create<NonZeroOp>(node.input(0)));
}

LogicalResult importTrilu(NodeContext &node) {
  auto upper = node.intAttr("upper", 1);
  if (failed(node.requireInputs(1)) || failed(upper))
    return failure();
  int64_t k = 0;
  if (node.hasInput(1)) {
    auto given = node.integerInput(1, "k");
    if (failed(given))
      return failure();
    k = *given;
  }
  return node.define(node.create<TriluOp>(node.input(0), {node.i64Attr("k", k),
                                                     node.boolAttr("upper", *upper != 0)}));
}

} // namespace

void registerIndexingImporters(OpImporterMap &map) {
  map["Gather"] = {importAxisGather<GatherOp>, 1};
  map["ScatterElements"] = {importScatterElements, 11};
  map["GatherElements"] = {importAxisGather<GatherElementsOp>, 11};
  map["GatherND"] = {importGatherND, 11};
  map["ScatterND"] = {importScatterND, 11};
  map["Trilu"] = {importTrilu, 14};
  map["NonZero"] = {importNonZero, 9};
}

} // namespace shardc::import
