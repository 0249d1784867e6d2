//===- TiedWeights.cpp - one parameter for weights an export duplicated ----===//
#include "passes/Autodiff/TiedWeights.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"
#include "dialects/Graph/WeightBytes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"

#include <cstring>

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::WeightOp;

/// A plain weight: its bytes are its value as stored (no box of a larger
/// tensor, no conversion, no repeat), the only kind an export duplicates.
bool plain(WeightOp weight) {
  return !weight.getStoredShape() && !weight.getStoredType() && !weight.getRepeatBlocks() &&
         !weight.getPartOffsets() && isa<FloatType>(weight.getType().getElementType());
}

/// Whether `copy` holds `original`'s bytes transposed (both 2-D).
bool transposedBytes(ArrayRef<char> original, ArrayRef<char> copy, int64_t rows, int64_t columns,
                     int64_t width) {
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column)
      if (std::memcmp(original.data() + (row * columns + column) * width,
                      copy.data() + (column * rows + row) * width, width) != 0)
        return false;
  return true;
}

/// Whether every element is the same: freshly initialised norms (ones) and
/// biases (zeros) are equal without being one parameter.
bool uniform(StringRef bytes, int64_t width) {
  for (size_t offset = width; offset + width <= bytes.size(); offset += width)
    if (std::memcmp(bytes.data(), bytes.data() + offset, width) != 0)
      return false;
  return true;
}

} // namespace

LogicalResult tieDuplicateWeights(func::FuncOp main, int64_t minElements) {
  struct Loaded {
    WeightOp weight;
    std::unique_ptr<llvm::MemoryBuffer> bytes;
  };
  std::vector<Loaded> weights;
  for (WeightOp weight : main.getBody().front().getOps<WeightOp>()) {
    if (!plain(weight) || weight.getType().getNumElements() < minElements)
      continue;
    auto bytes = graph::readStoredBytes(weight.getLoc(), weight.getName(), weight.getFile(),
                                        weight.getOffset(), weight.getSize(), std::nullopt);
    if (failed(bytes))
      return failure();
    if (uniform((*bytes)->getBuffer(), graph::elementByteWidth(weight.getType().getElementType())))
      continue;
    weights.push_back({weight, std::move(*bytes)});
  }
  std::vector<bool> tied(weights.size(), false);
  Builder names(main.getContext());
  SmallVector<Attribute> ties;
  for (size_t first = 0; first < weights.size(); ++first) {
    if (tied[first])
      continue;
    WeightOp original = weights[first].weight;
    ArrayRef<int64_t> shape = original.getType().getShape();
    StringRef bytes = weights[first].bytes->getBuffer();
    for (size_t second = first + 1; second < weights.size(); ++second) {
      WeightOp copy = weights[second].weight;
      if (tied[second] || copy.getType().getElementType() != original.getType().getElementType() ||
          copy.getSize() != original.getSize())
        continue;
      StringRef other = weights[second].bytes->getBuffer();
      ArrayRef<int64_t> copyShape = copy.getType().getShape();
      bool same = copyShape == shape && bytes == other;
      bool transposed =
          !same && shape.size() == 2 && copyShape.size() == 2 && copyShape[0] == shape[1] &&
          copyShape[1] == shape[0] &&
          transposedBytes({bytes.data(), bytes.size()}, {other.data(), other.size()}, shape[0],
                          shape[1], graph::elementByteWidth(original.getType().getElementType()));
      if (!same && !transposed)
        continue;
      // The copy's uses read the original (transposed), placed after both.
      Operation *later = original->isBeforeInBlock(copy) ? copy.getOperation()
                                                         : original.getOperation();
      OpBuilder builder(later->getBlock(), std::next(later->getIterator()));
      Value replacement = original.getResult();
      if (transposed)
        replacement = builder.create<graph::TransposeOp>(copy.getLoc(), original.getResult(),
                                                         builder.getDenseI64ArrayAttr({1, 0}));
      copy.emitWarning() << "holds the bytes of '" << original.getName()
                         << "'" << (transposed ? " transposed" : "")
                         << ": trained as one parameter, as torch trains a tied weight "
                            "(--untie keeps them apart)";
      copy.getResult().replaceAllUsesWith(replacement);
      ties.push_back(names.getDictionaryAttr(
          {names.getNamedAttr("initializer", copy.getNameAttr()),
           names.getNamedAttr("of", original.getNameAttr()),
           names.getNamedAttr("transposed", names.getBoolAttr(transposed))}));
      tied[second] = true;
    }
  }
  for (size_t index = 0; index < weights.size(); ++index)
    if (tied[index])
      weights[index].weight.erase();
  if (!ties.empty())
    if (auto module = main->getParentOfType<ModuleOp>())
      module->setAttr(kTiedWeightsAttrName, names.getArrayAttr(ties));
  return success();
}

} // namespace shardc::autodiff
