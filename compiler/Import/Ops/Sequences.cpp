//===- Sequences.cpp - importers of the ONNX sequence ops -----------------===//
//
// A sequence is a list of tensor values the importer holds (Binding.h); these
// ops build, edit and read that list at compile time, so every position must
// be known then. Only SplitToSequence and ConcatFromSequence emit graph ops
// (slices, a concat).
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"
#include "compiler/Import/TensorDecoding.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Input `index` of an op that also takes sequences, which must be a tensor here.
FailureOr<Value> tensorInput(NodeContext &node, unsigned index, StringRef role) {
  if (!node.hasInput(index))
    return node.error() << "the " << role << " input (" << index << ") is missing";
  if (node.binding(index).isSequence())
    return node.error() << "input " << index << " ('" << node.node().input(index)
                        << "') is a sequence; expected a tensor (" << role << ")";
  return node.input(index);
}

/// A position input resolved against `count` items: `allowEnd` admits
/// `count` itself (inserting at the back).
FailureOr<int64_t> positionInput(NodeContext &node, unsigned index, int64_t count, bool allowEnd) {
  if (failed(tensorInput(node, index, "position")))
    return failure();
  auto position = node.integerInput(index, "position");
  if (failed(position))
    return failure();
  int64_t high = allowEnd ? count : count - 1;
  if (*position < -count || *position > high)
    return node.error() << "position " << *position << " is out of range for a sequence of "
                        << count << " tensors; expected " << -count << " <= position <= " << high;
  return *position < 0 ? *position + count : *position;
}

LogicalResult checkElementType(NodeContext &node, const TensorSequence &sequence, Value tensor) {
  Type element = tensorType(tensor).getElementType();
  if (element != sequence.elementType)
    return node.error() << "the tensor has element type " << element << "; expected the sequence's "
                        << sequence.elementType;
  return success();
}

LogicalResult importSequenceConstruct(NodeContext &node) {
  if (node.numInputs() == 0)
    return node.error() << "SequenceConstruct has no inputs; expected at least one tensor";
  if (failed(node.requireInputs(node.numInputs())))
    return failure();
  TensorSequence sequence{node.inputType(0).getElementType(), {}};
  for (unsigned i = 0; i < node.numInputs(); ++i) {
    if (failed(checkElementType(node, sequence, node.input(i))))
      return failure();
    sequence.items.push_back(node.input(i));
  }
  node.setBinding(0, Binding::of(std::move(sequence)));
  return success();
}

LogicalResult importSequenceEmpty(NodeContext &node) {
  auto dtype = node.intAttr("dtype", onnx::TensorProto::FLOAT);
  if (failed(dtype))
    return failure();
  Type element = elementTypeOf(static_cast<int32_t>(*dtype), node.context());
  if (!element)
    return node.error() << "attribute 'dtype' is " << dataTypeName(static_cast<int32_t>(*dtype))
                        << "; expected a numeric or boolean type";
  node.setBinding(0, Binding::of(TensorSequence{element, {}}));
  return success();
}

LogicalResult importSequenceInsert(NodeContext &node) {
  auto sequence = node.sequenceInput(0);
  if (failed(sequence))
    return failure();
  auto tensor = tensorInput(node, 1, "tensor");
  if (failed(tensor) || failed(checkElementType(node, *sequence, *tensor)))
    return failure();
  int64_t count = static_cast<int64_t>(sequence->items.size()), at = count;
  if (node.hasInput(2)) {
    auto position = positionInput(node, 2, count, /*allowEnd=*/true);
    if (failed(position))
      return failure();
    at = *position;
  }
  sequence->items.insert(sequence->items.begin() + at, *tensor);
  node.setBinding(0, Binding::of(std::move(*sequence)));
  return success();
}

LogicalResult importSequenceAt(NodeContext &node) {
  auto sequence = node.sequenceInput(0);
  if (failed(sequence))
    return failure();
  auto position =
      positionInput(node, 1, static_cast<int64_t>(sequence->items.size()), /*allowEnd=*/false);
  if (failed(position))
    return failure();
  node.setOutput(0, sequence->items[*position]);
  return success();
}

LogicalResult importSequenceErase(NodeContext &node) {
  auto sequence = node.sequenceInput(0);
  if (failed(sequence))
    return failure();
  int64_t count = static_cast<int64_t>(sequence->items.size());
  if (count == 0)
    return node.error() << "cannot erase from an empty sequence";
  int64_t at = count - 1;
  if (node.hasInput(1)) {
    auto position = positionInput(node, 1, count, /*allowEnd=*/false);
    if (failed(position))
      return failure();
    at = *position;
  }
  sequence->items.erase(sequence->items.begin() + at);
  node.setBinding(0, Binding::of(std::move(*sequence)));
  return success();
}

LogicalResult importSequenceLength(NodeContext &node) {
  auto sequence = node.sequenceInput(0);
  if (failed(sequence))
    return failure();
  auto type = RankedTensorType::get({}, IntegerType::get(node.context(), 64));
  node.setOutput(
      0, node.constant(DenseElementsAttr::get(type, static_cast<int64_t>(sequence->items.size()))));
  return success();
}

LogicalResult importSplitToSequence(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", 0);
  auto keepdims = node.intAttr("keepdims", 1);
  if (failed(node.requireInputs(1)) || failed(axisAttr) || failed(keepdims))
    return failure();
  RankedTensorType type = node.inputType(0);
  auto axis = node.normalizeAxis(*axisAttr, type.getRank());
  if (failed(axis))
    return failure();
  int64_t length = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (node.hasInput(1)) {
    auto split = node.constantInput(1, "split");
    if (failed(split))
      return failure();
    if (constfold::isFloat(split->type) || split->rank() > 1)
      return node.error() << "split has shape " << formatShape(split->shape)
                          << "; expected integers, a scalar or 1-D";
    for (int64_t size : split->ints)
      if (size < 0)
        return node.error() << "split has the negative size " << size << "; expected sizes >= 0";
    if (split->rank() == 0) {
      // Chunks of that size, the last one what is left.
      int64_t chunk = split->ints.front();
      if (chunk <= 0)
        return node.error() << "split is " << chunk << "; expected a positive chunk size";
      for (int64_t at = 0; at < length; at += chunk)
        sizes.push_back(std::min(chunk, length - at));
    } else {
      sizes.assign(split->ints.begin(), split->ints.end());
      int64_t total = 0;
      for (int64_t size : sizes)
        total += size;
      if (total != length)
        return node.error() << "split " << formatShape(sizes) << " adds up to " << total
                            << "; expected the size of axis " << *axis << ", " << length;
    }
  } else {
    // No split: one element per piece, squeezed unless keepdims.
    sizes.assign(length, 1);
    squeeze = *keepdims == 0;
  }
  TensorSequence sequence{type.getElementType(), {}};
  SmallVector<int64_t> squeezed(type.getShape());
  squeezed.erase(squeezed.begin() + *axis);
  int64_t at = 0;
  for (int64_t size : sizes) {
    auto piece = sliceAxis(node, node.input(0), *axis, at, at + size);
    if (succeeded(piece) && squeeze)
      piece = reshapeTo(node, *piece, squeezed);
    if (failed(piece))
      return failure();
    sequence.items.push_back(*piece);
    at += size;
  }
  node.setBinding(0, Binding::of(std::move(sequence)));
  return success();
}

LogicalResult importConcatFromSequence(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", INT64_MIN);
  auto newAxis = node.intAttr("new_axis", 0);
  if (failed(axisAttr) || failed(newAxis))
    return failure();
  if (*axisAttr == INT64_MIN)
    return node.error() << "attribute 'axis' is missing";
  auto sequence = node.sequenceInput(0);
  if (failed(sequence))
    return failure();
  if (sequence->items.empty())
    return node.error() << "cannot concatenate an empty sequence; expected at least one tensor";
  int64_t rank = tensorType(sequence->items.front()).getRank();
  // Stacking (new_axis = 1) inserts a size-1 dim at axis in [-r - 1, r] first.
  auto axis = node.normalizeAxis(*axisAttr, *newAxis ? rank + 1 : rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> items;
  for (Value item : sequence->items) {
    FailureOr<Value> value = success(item);
    if (*newAxis) {
      RankedTensorType type = tensorType(item);
      if (type.getRank() != rank)
        return node.error() << "the sequence holds tensors of ranks " << rank << " and "
                            << type.getRank() << "; expected one rank to stack";
      SmallVector<int64_t> shape(type.getShape());
      shape.insert(shape.begin() + *axis, 1);
      value = reshapeTo(node, item, shape);
    }
    if (failed(value))
      return failure();
    items.push_back(*value);
  }
  return node.define(concatAxis(node, items, *axis));
}

} // namespace

void registerSequenceImporters(OpImporterMap &map) {
  map["SequenceConstruct"] = {importSequenceConstruct, 11};
  map["SequenceEmpty"] = {importSequenceEmpty, 11};
  map["SequenceInsert"] = {importSequenceInsert, 11, /*takesSequences=*/true};
  map["SequenceAt"] = {importSequenceAt, 11, /*takesSequences=*/true};
  map["SequenceErase"] = {importSequenceErase, 11, /*takesSequences=*/true};
  map["SequenceLength"] = {importSequenceLength, 11, /*takesSequences=*/true};
  map["SplitToSequence"] = {importSplitToSequence, 11};
  map["ConcatFromSequence"] = {importConcatFromSequence, 11, /*takesSequences=*/true};
}

} // namespace shardc::import
