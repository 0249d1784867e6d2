//===- Movement.cpp - importers of ONNX ops that move data ----------------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Concat, Split,
// Slice, Identity, Dropout. Shape operands must fold to constants: after the
// dims are bound, ONNX's shape arithmetic always does.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"

#include "dialects/Graph/TypeUtils.h"

#include <cstdio>

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// Axes from input `index` when present (opset 13+), else from the attribute.
FailureOr<std::optional<SmallVector<int64_t>>> axesOperand(NodeContext &node, unsigned index) {
  if (node.hasInput(index)) {
    auto axes = node.intsInput(index, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(*axes);
  }
  return node.intsAttr("axes");
}

LogicalResult defineReshaped(NodeContext &node, ArrayRef<int64_t> shape) {
  return node.define(node.reshape(node.input(0), shape));
}

LogicalResult importReshape(NodeContext &node) {
  auto requested = node.requireInputs(2);
  auto allowZero = node.intAttr("allowzero", 0);
  if (failed(requested) || failed(allowZero))
    return failure();
  auto target = node.intsInput(1, "shape");
  if (failed(target))
    return failure();
  RankedTensorType input = node.inputType(0);
  SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == 0 && !*allowZero) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return node.error() << "shape " << formatShape(*target) << " copies dimension " << i
                            << " (0), which the " << formatShape(input.getShape())
                            << " input does not have";
      dim = input.getDimSize(i);
    } else if (dim == -1) {
      if (inferred)
        return node.error() << "shape " << formatShape(*target)
                            << " has more than one -1; expected at most one";
      inferred = i;
      dim = 1;
    } else if (dim < 0) {
      return node.error() << "shape " << formatShape(*target) << " has negative size " << dim;
    }
    known *= dim;
    shape.push_back(dim);
  }
  int64_t elements = input.getNumElements();
  if (inferred) {
    if (known == 0 || elements % known != 0)
      return node.error() << "cannot reshape " << formatShape(input.getShape()) << " ("
                          << elements << " elements) to " << formatShape(*target);
    shape[*inferred] = elements / known;
  } else if (known != elements) {
    return node.error() << "cannot reshape " << formatShape(input.getShape()) << " (" << elements
                        << " elements) to " << formatShape(shape) << " (" << known
                        << " elements); expected equal element counts";
  }
  return defineReshaped(node, shape);
}

LogicalResult importFlatten(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", 1);
  if (failed(node.requireInputs(1)) || failed(axisAttr))
    return failure();
  RankedTensorType input = node.inputType(0);
  int64_t rank = input.getRank(), axis = *axisAttr;
  if (axis < -rank || axis > rank)
    return node.error() << "axis " << axis << " is out of range; expected " << -rank
                        << " <= axis <= " << rank;
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= input.getDimSize(d);
  return defineReshaped(node, {outer, inner});
}

LogicalResult importSqueeze(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto axes = axesOperand(node, 1);
  if (failed(axes))
    return failure();
  RankedTensorType input = node.inputType(0);
  SmallVector<int64_t> squeezed;
  if (*axes) {
    auto normalized = node.normalizeAxes(**axes, input.getRank());
    if (failed(normalized))
      return failure();
    squeezed = *normalized;
    for (int64_t axis : squeezed)
      if (input.getDimSize(axis) != 1)
        return node.error() << "cannot squeeze dimension " << axis << " of "
                            << formatShape(input.getShape()) << "; expected size 1 but got "
                            << input.getDimSize(axis);
  } else {
    for (int64_t d = 0; d < input.getRank(); ++d)
      if (input.getDimSize(d) == 1)
        squeezed.push_back(d);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(squeezed, d))
      shape.push_back(input.getDimSize(d));
  return defineReshaped(node, shape);
}

LogicalResult importUnsqueeze(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto axes = axesOperand(node, 1);
  if (failed(axes))
    return failure();
  if (!*axes)
    return node.error() << "the axes to insert are missing";
  RankedTensorType input = node.inputType(0);
  int64_t rank = input.getRank() + static_cast<int64_t>((*axes)->size());
  auto inserted = node.normalizeAxes(**axes, rank);
  if (failed(inserted))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> remaining = input.getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(*inserted, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(remaining.front());
      remaining = remaining.drop_front();
    }
  }
  return defineReshaped(node, shape);
}

LogicalResult importTranspose(NodeContext &node) {
  auto permAttr = node.intsAttr("perm");
  if (failed(node.requireInputs(1)) || failed(permAttr))
    return failure();
  int64_t rank = node.inputType(0).getRank();
  SmallVector<int64_t> perm;
  if (*permAttr)
    perm = **permAttr;
  else // ONNX's default reverses the dims.
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  return node.define(node.transpose(node.input(0), perm));
}

LogicalResult importExpand(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  auto target = node.intsInput(1, "shape");
  if (failed(target))
    return failure();
  RankedTensorType input = node.inputType(0);
  auto shape = broadcastShapes(input.getShape(), *target);
  if (!shape)
    return node.error() << "cannot expand " << formatShape(input.getShape()) << " to "
                        << formatShape(*target) << "; the shapes do not broadcast";
  return node.define(node.createTyped<ExpandOp>(
      RankedTensorType::get(*shape, input.getElementType()), node.input(0)));
}

LogicalResult importConcat(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", INT64_MIN);
  if (failed(node.requireInputs(std::max(1u, node.numInputs()))) || failed(axisAttr))
    return failure();
  if (*axisAttr == INT64_MIN)
    return node.error() << "attribute 'axis' is missing";
  auto axis = node.normalizeAxis(*axisAttr, node.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < node.numInputs(); ++i)
    inputs.push_back(node.input(i));
  return node.define(node.create<ConcatOp>(inputs, {node.i64Attr("axis", *axis)}));
}

LogicalResult importSplit(NodeContext &node) {
  auto axisAttr = node.intAttr("axis", 0);
  auto pieces = node.intAttr("num_outputs", 0);
  if (failed(node.requireInputs(1)) || failed(axisAttr) || failed(pieces))
    return failure();
  RankedTensorType input = node.inputType(0);
  auto axis = node.normalizeAxis(*axisAttr, input.getRank());
  if (failed(axis))
    return failure();
  int64_t length = input.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (node.hasInput(1)) {
    auto given = node.intsInput(1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (auto attr = node.intsAttr("split"); failed(attr)) {
    return failure();
  } else if (*attr) {
    sizes = **attr;
  } else if (*pieces > 0) {
    // Opset 18: equal chunks rounded up, the last one smaller.
    int64_t chunk = (length + *pieces - 1) / *pieces;
    for (int64_t i = 0; i < *pieces; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, length - i * chunk)));
  } else {
    int64_t count = node.numOutputs();
    if (count == 0 || length % count != 0)
      return node.error() << "cannot split dimension " << *axis << " of size " << length
                          << " into " << count << " equal parts";
    sizes.assign(count, length / count);
  }
  if (static_cast<int64_t>(sizes.size()) != node.numOutputs())
    return node.error() << "split gives " << sizes.size() << " pieces; expected one per output ("
                        << node.numOutputs() << ")";
  auto results = node.createMulti<SplitOp>(
      node.input(0), {node.i64Attr("axis", *axis), node.arrayAttr("sizes", sizes)});
  if (failed(results))
    return failure();
  for (auto [i, value] : llvm::enumerate(*results))
    node.setOutput(i, value);
  return success();
}

LogicalResult importSlice(NodeContext &node) {
  if (failed(node.requireInputs(3)))
    return failure();
  auto starts = node.intsInput(1, "starts");
  auto ends = succeeded(starts) ? node.intsInput(2, "ends")
                                : FailureOr<SmallVector<int64_t>>(failure());
  if (failed(ends))
    return failure();
  RankedTensorType input = node.inputType(0);
  int64_t rank = input.getRank();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (node.hasInput(3)) {
    auto given = node.intsInput(3, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (node.hasInput(4)) {
    auto given = node.intsInput(4, "steps");
    if (failed(given))
      return failure();
    steps = *given;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return node.error() << "starts, ends, axes and steps differ in length; got "
                        << starts->size() << ", " << ends->size() << ", " << axes.size()
                        << " and " << steps.size();
  SmallVector<int64_t> begin(rank, 0), end(input.getShape()), stride(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto axis = node.normalizeAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return node.error() << "axis " << axes[i] << " is sliced twice";
    seen[*axis] = true;
    int64_t dim = input.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return node.error() << "step of axis " << axes[i] << " is 0";
    // ONNX: negative bounds count from the end, then clamp to the valid range
    // for the direction ([0, dim] forward, [0, dim - 1] and [-1, dim - 1] backward).
    int64_t first = (*starts)[i], last = (*ends)[i];
    if (first < 0)
      first = std::max<int64_t>(first, -dim) + dim;
    if (last < 0)
      last = std::max<int64_t>(last, -dim - 1) + dim;
    if (step > 0) {
      first = std::min(first, dim);
      last = std::max<int64_t>(0, std::min(last, dim));
    } else {
      first = std::min(first, dim - 1);
      last = std::min(last, dim - 1);
    }
    begin[*axis] = first;
    end[*axis] = last;
    stride[*axis] = step;
  }
  return node.define(node.create<SliceOp>(node.input(0), {node.arrayAttr("starts", begin),
                                                     node.arrayAttr("ends", end),
                                                     node.arrayAttr("steps", stride)}));
}

/// Passes a tensor or a sequence through (loop bodies forward sequences so).
LogicalResult importIdentity(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  node.setBinding(0, node.binding(0));
  return success();
}

/// Inference-mode Dropout passes its input through and its mask (output 1)
/// keeps every element. From opset 12 training is a runtime input: shardc
/// compiles inference programs, so training_mode must be known at compile
/// time and false, unless the ratio is 0 (training then drops nothing).
/// Taking it as false unseen would silently drop nothing where the model
/// asks for random drops.
LogicalResult importDropout(NodeContext &node) {
  if (failed(node.requireInputs(1)) || failed(node.rejectOutputsFrom(2)))
    return failure();
  if (node.opset() >= 12 && node.hasInput(2)) {
    auto training = node.constantInput(2, "training_mode");
    if (failed(training))
      return failure();
    if (training->numElements() != 1)
      return node.error() << "the training_mode input must hold one value; got "
                          << training->numElements();
    if (training->asDouble(0) != 0) {
      double ratio = 0.5; // ONNX's default
      if (node.hasInput(1)) {
        auto given = node.constantInput(1, "ratio");
        if (failed(given))
          return failure();
        if (given->numElements() != 1)
          return node.error() << "the ratio input must hold one value; got "
                              << given->numElements();
        ratio = given->asDouble(0);
      }
      char shown[32]; // 0.5, not the diagnostic's 5.000000e-01
      std::snprintf(shown, sizeof(shown), "%g", ratio);
      if (ratio != 0)
        return node.error() << "training mode (training_mode = true, ratio " << shown
                            << ") is not supported; expected training_mode false, as "
                               "inference runs it";
    }
  }
  node.setOutput(0, node.input(0));
  if (node.hasOutput(1)) {
    // The mask is bool from opset 10, the input's type before.
    RankedTensorType inputType = node.inputType(0);
    Type element = node.opset() >= 10 ? node.builder().getI1Type() : inputType.getElementType();
    auto maskType = RankedTensorType::get(inputType.getShape(), element);
    Attribute one = isa<FloatType>(element) ? Attribute(node.builder().getFloatAttr(element, 1.0))
                                            : node.builder().getIntegerAttr(element, 1);
    node.setOutput(1, node.constant(DenseElementsAttr::get(maskType, one)));
  }
  return success();
}

} // namespace

void registerMovementImporters(OpImporterMap &map) {
  map["Reshape"] = {importReshape, 5};
  map["Flatten"] = {importFlatten, 1};
  map["Squeeze"] = {importSqueeze, 1};
  map["Unsqueeze"] = {importUnsqueeze, 1};
  map["Transpose"] = {importTranspose, 1};
  map["Expand"] = {importExpand, 8};
  map["Concat"] = {importConcat, 4};
  map["Split"] = {importSplit, 2};
  map["Slice"] = {importSlice, 10};
  map["Identity"] = {importIdentity, 1, /*takesSequences=*/true};
  map["Dropout"] = {importDropout, 1};
}

} // namespace shardc::import
