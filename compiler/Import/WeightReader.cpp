//===- WeightReader.cpp - load the bytes a graph.weight refers to ---------===//
#include "compiler/Import/WeightReader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;

namespace shardc::import {

FailureOr<DenseElementsAttr> readWeight(graph::WeightOp weight) {
  uint64_t fileSize = 0;
  if (std::error_code error = llvm::sys::fs::file_size(weight.getFile(), fileSize))
    return weight.emitError() << "weight '" << weight.getName() << "' needs the file '"
                              << weight.getFile() << "', which cannot be read: "
                              << error.message();
  if (static_cast<uint64_t>(weight.getOffset() + weight.getSize()) > fileSize)
    return weight.emitError() << "weight '" << weight.getName() << "' runs past the end of '"
                              << weight.getFile() << "'; expected " << weight.getSize()
                              << " bytes at offset " << weight.getOffset() << " but the file has "
                              << fileSize;
  auto buffer = llvm::MemoryBuffer::getFileSlice(weight.getFile(), weight.getSize(),
                                                 weight.getOffset(), /*IsVolatile=*/false);
  if (!buffer)
    return weight.emitError() << "weight '" << weight.getName() << "' needs the file '"
                              << weight.getFile() << "', which cannot be read: "
                              << buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  if (static_cast<int64_t>(bytes.size()) != weight.getSize())
    return weight.emitError() << "weight '" << weight.getName() << "' runs past the end of '"
                              << weight.getFile() << "'; expected " << weight.getSize()
                              << " bytes at offset " << weight.getOffset() << " but got "
                              << bytes.size();
  RankedTensorType type = weight.getType();
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> values;
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(values));
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bytes.data(), bytes.size()));
}

} // namespace shardc::import
