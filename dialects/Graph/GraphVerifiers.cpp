//===- GraphVerifiers.cpp - verifiers of ops whose types are not inferred -===//
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"

#include <algorithm>

using namespace mlir;
using namespace shardc::graph;

LogicalResult WeightOp::verify() {
  RankedTensorType type = getType();
  std::optional<ArrayRef<int64_t>> stored = getStoredShape(), box = getBoxOffsets();
  if (stored.has_value() != box.has_value())
    return emitOpError() << "needs both stored_shape and box_offsets, or neither";
  // The box's shape: the result's, before any repetition, in the stored
  // orientation.
  SmallVector<int64_t> boxShape(type.getShape());
  if ((*this)->hasAttr(kTransposedAttrName)) {
    if (type.getRank() != 2)
      return emitOpError() << "is " << kTransposedAttrName << " but not 2-D";
    std::reverse(boxShape.begin(), boxShape.end());
  }
  if (std::optional<ArrayRef<int64_t>> repeat = getRepeatBlocks()) {
    if (!stored)
      return emitOpError() << "repeat_blocks needs stored_shape and box_offsets";
    // After partitioning the result is one rank's block of the repeated
    // tensor, so its size along the axis need not be a multiple of a block.
    if (repeat->size() != 3 || (*repeat)[0] < 0 || (*repeat)[0] >= type.getRank() ||
        (*repeat)[1] <= 0 || (*repeat)[2] <= 0)
      return emitOpError() << "repeat_blocks must be [axis, block, times] with an axis of the "
                              "result and positive block and times; got "
                           << formatShape(*repeat) << " for " << formatShape(type.getShape());
    boxShape[(*repeat)[0]] = std::max<int64_t>(1, boxShape[(*repeat)[0]] / (*repeat)[2]);
  }
  int64_t storedElements = type.getNumElements();
  if (stored) {
    if (int64_t(stored->size()) != type.getRank() || int64_t(box->size()) != type.getRank())
      return emitOpError() << "stored_shape and box_offsets need one entry per dim; expected "
                           << type.getRank() << " but got " << stored->size() << " and "
                           << box->size();
    storedElements = 1;
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      if ((*box)[dim] < 0 || (*box)[dim] + boxShape[dim] > (*stored)[dim])
        return emitOpError() << "box of " << formatShape(boxShape) << " at "
                             << formatShape(*box) << " does not fit in the stored "
                             << formatShape(*stored);
      storedElements *= (*stored)[dim];
    }
  }
  Type storedType = getStoredType() ? *getStoredType() : type.getElementType();
  if (getStoredType() && !(isa<FloatType>(storedType) && isa<FloatType>(type.getElementType())))
    return emitOpError() << "converts stored " << storedType << " to " << type.getElementType()
                         << "; only float types convert";
  int64_t expected = storedElements * elementByteWidth(storedType);
  // The getters are unsigned: the attributes hold the signed values.
  if (getOffsetAttr().getInt() < 0)
    return emitOpError() << "offset must not be negative; got " << getOffsetAttr().getInt();
  if (std::optional<ArrayRef<int64_t>> parts = getPartOffsets()) {
    if (parts->empty() || getSizeAttr().getInt() % int64_t(parts->size()) != 0 ||
        parts->front() != getOffsetAttr().getInt() ||
        llvm::any_of(*parts, [](int64_t offset) { return offset < 0; }))
      return emitOpError() << "part_offsets must be non-negative offsets of equal parts of the "
                              "size, the first at offset; got "
                           << formatShape(*parts) << " for " << getSizeAttr().getInt()
                           << " bytes at offset " << getOffsetAttr().getInt();
  }
  if (getSizeAttr().getInt() != expected)
    return emitOpError() << "size does not hold a " << formatShape(stored.value_or(type.getShape()))
                         << " " << storedType << " tensor; expected " << expected
                         << " bytes but got " << getSize();
  if (Attribute train = (*this)->getAttr(kTrainAttrName)) {
    auto role = dyn_cast<StringAttr>(train);
    if (!role || !llvm::is_contained({kTrainParam, kTrainCopy, kTrainState, kTrainAccumulator},
                                     role.getValue()))
      return emitOpError() << kTrainAttrName << " must be \"" << kTrainParam << "\", \""
                           << kTrainCopy << "\", \"" << kTrainState << "\" or \""
                           << kTrainAccumulator << "\"; got " << train;
    // An optimizer state or accumulator starts as zeros: it has no bytes
    // anywhere.
    if (startsAsZeros(role.getValue()) != getFile().empty())
      return emitOpError() << "a " << kTrainState << " or " << kTrainAccumulator
                           << " weight has no file and every other has one; got file '"
                           << getFile() << "'";
  } else if (getFile().empty()) {
    return emitOpError() << "has no file";
  }
  return success();
}

LogicalResult AssignOp::verify() {
  auto weight = getTarget().getDefiningOp<WeightOp>();
  if (!weight || !weight->hasAttr(kTrainAttrName))
    return emitOpError() << "writes a value that is not a graph.weight marked " << kTrainAttrName;
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError() << "changes the shape; expected "
                         << formatShape(getInput().getType().getShape()) << " but got "
                         << formatShape(getType().getShape());
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType(), result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "changes the element type; expected " << input.getElementType()
                         << " but got " << result.getElementType();
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "changes the element count; expected " << input.getNumElements() << " ("
                         << formatShape(input.getShape()) << ") but got " << result.getNumElements()
                         << " (" << formatShape(result.getShape()) << ")";
  return success();
}

LogicalResult ExpandOp::verify() {
  RankedTensorType input = getInput().getType(), result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "changes the element type; expected " << input.getElementType()
                         << " but got " << result.getElementType();
  if (!broadcastsTo(input.getShape(), result.getShape()))
    return emitOpError() << "input does not broadcast to the result; expected a shape that "
                         << "broadcasts to " << formatShape(result.getShape()) << " but got "
                         << formatShape(input.getShape());
  return success();
}

LogicalResult CompositeOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body arguments differ from the inputs; expected " << getInputs().size()
                         << " but got " << body.getNumArguments();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(body.getArgumentTypes(), getInputs().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError() << "body argument " << index << " has type " << std::get<0>(pair)
                           << "; expected " << std::get<1>(pair);
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values whose types differ from the results";
  return success();
}
