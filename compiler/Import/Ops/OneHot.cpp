//===- OneHot.cpp - importer of ONNX OneHot -------------------------------===//
//
// OneHot compares the indices, with a size-1 dim inserted at `axis`,
// against the range [0, depth) laid along that dim, and selects on_value
// where they are equal and off_value elsewhere. Depth must be known at
// compile time (it is the new dim's size); indices and values may be computed.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Depth is a scalar or a one-element tensor of any numeric type; a float
/// depth counts its whole part, as a cast to int64 would.
FailureOr<int64_t> depthOf(NodeContext &node) {
  auto depth = node.constantInput(1, "depth");
  if (failed(depth))
    return failure();
  if (depth->numElements() != 1)
    return node.error() << "depth has shape " << formatShape(depth->shape)
                        << "; expected a scalar or one element";
  int64_t value = constfold::isFloat(depth->type)
                      ? static_cast<int64_t>(std::trunc(depth->floats.front()))
                      : depth->ints.front();
  if (value <= 0)
    return node.error() << "depth is " << value << "; expected a positive count";
  return value;
}

LogicalResult importOneHot(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", -1);
  if (failed(node.requireInputs(3)) || failed(axisAttr))
    return failure();
  auto depth = depthOf(node);
  if (failed(depth))
    return failure();
  RankedTensorType indicesType = node.inputType(0), valuesType = node.inputType(2);
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return node.error() << "values has shape " << formatShape(valuesType.getShape())
                        << "; expected [2] (off_value, on_value)";
  int64_t rank = indicesType.getRank();
  if (*axisAttr < -rank - 1 || *axisAttr > rank)
    return node.error() << "axis " << *axisAttr << " is out of range; expected " << -rank - 1
                        << " <= axis <= " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank + 1 : *axisAttr;

  // Indices of any numeric type are used as int64 (floats truncated).
  auto i64 = IntegerType::get(node.context(), 64);
  FailureOr<Value> indices = success(node.input(0));
  if (indicesType.getElementType() != i64)
    indices =
        node.createTyped<CastOp>(RankedTensorType::get(indicesType.getShape(), i64), node.input(0));
  // -depth <= i < 0 counts from the end. Opset 9 and 10 only allow i >= 0;
  // onnxruntime and onnx's reference wrap negative ones there too.
  if (succeeded(indices)) {
    auto zero = node.scalar(i64, 0);
    auto size = node.scalar(i64, static_cast<double>(*depth));
    auto negative =
        succeeded(zero)
            ? node.create<CompareOp>(
                  ValueRange{*indices, *zero},
                  {node.attr("predicate",
                             ComparePredicateAttr::get(node.context(), ComparePredicate::lt))})
            : noValue();
    auto shifted = succeeded(size) ? node.create<AddOp>(ValueRange{*indices, *size}) : noValue();
    indices = succeeded(negative) && succeeded(shifted)
                  ? node.create<WhereOp>(ValueRange{*negative, *shifted, *indices})
                  : noValue();
  }
  SmallVector<int64_t> withAxis(indicesType.getShape()), rangeShape(rank + 1, 1);
  withAxis.insert(withAxis.begin() + axis, 1);
  rangeShape[axis] = *depth;
  if (succeeded(indices))
    indices = reshapeTo(node, *indices, withAxis);
  auto range = node.constant(
      DenseElementsAttr::get(RankedTensorType::get(rangeShape, i64),
                             ArrayRef<int64_t>(llvm::to_vector(llvm::seq<int64_t>(0, *depth)))));
  auto hot = succeeded(indices)
                 ? node.create<CompareOp>(
                       ValueRange{*indices, range},
                       {node.attr("predicate",
                                  ComparePredicateAttr::get(node.context(), ComparePredicate::eq))})
                 : noValue();

  // off_value and on_value as scalars.
  auto off = sliceAxis(node, node.input(2), 0, 0, 1);
  off = succeeded(off) ? reshapeTo(node, *off, {}) : noValue();
  auto on = sliceAxis(node, node.input(2), 0, 1, 2);
  on = succeeded(on) ? reshapeTo(node, *on, {}) : noValue();
  if (failed(hot) || failed(off) || failed(on))
    return failure();
  return node.define(node.create<WhereOp>(ValueRange{*hot, *on, *off}));
}

} // namespace

void registerOneHotImporters(OpImporterMap &map) { map["OneHot"] = {importOneHot, 9}; }

} // namespace shardc::import
