//===- WeightBox.cpp - a block of a weight, cut at compile time -----------===//
#include "dialects/Graph/WeightBox.h"

using namespace mlir;

namespace shardc::graph {

WeightOp weightBox(OpBuilder &builder, WeightOp weight, int64_t dim, int64_t begin,
                   int64_t end) {
  RankedTensorType type = weight.getType();
  SmallVector<int64_t> shape(type.getShape()), stored(type.getShape()), offsets(type.getRank(), 0);
  if (weight.getStoredShape()) {
    stored.assign(weight.getStoredShape()->begin(), weight.getStoredShape()->end());
    offsets.assign(weight.getBoxOffsets()->begin(), weight.getBoxOffsets()->end());
  }
  shape[dim] = end - begin;
  offsets[dim] += begin;
  return builder.create<WeightOp>(
      weight.getLoc(), RankedTensorType::get(shape, type.getElementType()), weight.getName(),
      weight.getFile(), weight.getOffset(), weight.getSize(), builder.getDenseI64ArrayAttr(stored),
      builder.getDenseI64ArrayAttr(offsets), weight.getStoredTypeAttr(),
      /*repeat_blocks=*/DenseI64ArrayAttr(), weight.getPartOffsetsAttr());
}

} // namespace shardc::graph
