//===- Decompose.cpp - building blocks of ops imported as several ---------===//
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

#include <cstdlib>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {

FailureOr<Value> sliceAxes(NodeContext &node, Value value, ArrayRef<int64_t> axes,
                           ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
                           ArrayRef<int64_t> steps) {
  RankedTensorType type = tensorType(value);
  SmallVector<int64_t> begin(type.getRank(), 0), end(type.getShape()), stride(type.getRank(), 1);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    begin[axis] = starts[i];
    end[axis] = ends[i];
    stride[axis] = steps[i];
  }
  if (llvm::all_of(stride, [](int64_t step) { return step == 1; }) &&
      llvm::all_of(begin, [](int64_t start) { return start == 0; }) &&
      ArrayRef<int64_t>(end) == type.getShape())
    return value;
  return node.create<SliceOp>(value, {node.arrayAttr("starts", begin), node.arrayAttr("ends", end),
                                      node.arrayAttr("steps", stride)});
}

FailureOr<Value> sliceAxis(NodeContext &node, Value value, int64_t axis, int64_t start, int64_t end,
                           int64_t step) {
  return sliceAxes(node, value, {axis}, {start}, {end}, {step});
}

FailureOr<Value> concatAxis(NodeContext &node, ArrayRef<Value> values, int64_t axis) {
  if (values.size() == 1)
    return values.front();
  return node.create<ConcatOp>(values, {node.i64Attr("axis", axis)});
}

FailureOr<Value> reshapeTo(NodeContext &node, Value value, ArrayRef<int64_t> shape) {
  if (tensorType(value).getShape() == shape)
    return value;
  return node.reshape(value, shape);
}

FailureOr<Value> permute(NodeContext &node, Value value, ArrayRef<int64_t> perm) {
  for (auto [i, dim] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != dim)
      return node.transpose(value, perm);
  return value;
}

FailureOr<Value> expandTo(NodeContext &node, Value value, ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(value);
  if (type.getShape() == shape)
    return value;
  return node.createTyped<ExpandOp>(RankedTensorType::get(shape, type.getElementType()), value);
}

FailureOr<Value> sumOver(NodeContext &node, Value value, ArrayRef<int64_t> axes) {
  if (axes.empty())
    return value;
  return node.create<ReduceSumOp>(value,
                                  {node.arrayAttr("axes", axes), node.boolAttr("keepdims", false)});
}

namespace {

/// The element of an axis of `size` that output position `at` (counted from
/// the first original element, so negative ahead of it) copies.
int64_t sourceIndex(PadMode mode, int64_t at, int64_t size) {
  switch (mode) {
  case PadMode::Edge:
    return std::clamp<int64_t>(at, 0, size - 1);
  case PadMode::Wrap:
    return ((at % size) + size) % size;
  case PadMode::Reflect: {
    // Mirrored on the first and last elements: period 2 * (size - 1).
    if (size == 1)
      return 0;
    int64_t period = 2 * (size - 1);
    int64_t phase = ((at % period) + period) % period;
    return phase < size ? phase : period - phase;
  }
  case PadMode::Constant:
    break;
  }
  return 0;
}

} // namespace

FailureOr<Value> padAxis(NodeContext &node, Value value, int64_t axis, int64_t before,
                         int64_t after, PadMode mode, Value fill) {
  int64_t size = tensorType(value).getDimSize(axis);
  // Negative amounts crop first; what is left is then padded (onnxruntime's order).
  int64_t dropFront = std::max<int64_t>(0, -before), dropBack = std::max<int64_t>(0, -after);
  if (dropFront + dropBack > size)
    return node.error() << "pads remove " << dropFront + dropBack << " elements of axis " << axis
                        << "; expected at most its size " << size;
  auto cropped = sliceAxis(node, value, axis, dropFront, size - dropBack);
  if (failed(cropped))
    return failure();
  value = *cropped;
  size -= dropFront + dropBack;
  before = std::max<int64_t>(0, before);
  after = std::max<int64_t>(0, after);
  if (before == 0 && after == 0)
    return value;

  RankedTensorType type = tensorType(value);
  SmallVector<Value> pieces;
  auto block = [&](Value source, int64_t length) {
    SmallVector<int64_t> shape(type.getShape());
    shape[axis] = length;
    return expandTo(node, source, shape);
  };
  if (mode == PadMode::Constant) {
    for (int64_t length : {before, int64_t(-1), after}) {
      auto piece = length < 0 ? FailureOr<Value>(value) : block(fill, length);
      if (failed(piece))
        return failure();
      if (length != 0)
        pieces.push_back(*piece);
    }
    return concatAxis(node, pieces, axis);
  }
  if (size == 0)
    return node.error() << "cannot pad axis " << axis << " of size 0 by copying its elements; "
                        << "expected constant mode";
  // Output positions whose sources advance by the same step (+1, -1 or 0)
  // become one slice; the middle run is the input itself.
  int64_t total = before + size + after;
  auto source = [&](int64_t at) { return sourceIndex(mode, at - before, size); };
  for (int64_t at = 0; at < total;) {
    if (at == before) {
      pieces.push_back(value);
      at += size;
      continue;
    }
    int64_t limit = at < before ? before : total;
    int64_t first = source(at), step = 1, length = 1;
    if (at + 1 < limit && std::abs(source(at + 1) - first) <= 1) {
      step = source(at + 1) - first;
      while (at + length < limit && source(at + length) - source(at + length - 1) == step)
        ++length;
    }
    FailureOr<Value> piece;
    if (step == 0) {
      auto element = sliceAxis(node, value, axis, first, first + 1);
      piece = succeeded(element) ? block(*element, length) : noValue();
    } else if (step > 0) {
      piece = sliceAxis(node, value, axis, first, first + length);
    } else {
      piece = sliceAxis(node, value, axis, first, first - length, -1);
    }
    if (failed(piece))
      return failure();
    pieces.push_back(*piece);
    at += length;
  }
  return concatAxis(node, pieces, axis);
}

} // namespace shardc::import
