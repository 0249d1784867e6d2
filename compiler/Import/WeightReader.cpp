//===- WeightReader.cpp - load the bytes a weight refers to ---------------===//
#include "compiler/Import/WeightReader.h"

#include "llvm/Support/FileSystem.h"

using namespace mlir;

namespace shardc::import {

FailureOr<std::unique_ptr<llvm::MemoryBuffer>> readWeightBytes(Location location, StringRef name,
                                                               StringRef file, int64_t offset,
                                                               int64_t size) {
  uint64_t fileSize = 0;
  if (std::error_code error = llvm::sys::fs::file_size(file, fileSize))
    return emitError(location) << "weight '" << name << "' needs the file '" << file
                               << "', which cannot be read: " << error.message();
  if (static_cast<uint64_t>(offset + size) > fileSize)
    return emitError(location) << "weight '" << name << "' runs past the end of '" << file
                               << "'; expected " << size << " bytes at offset " << offset
                               << " but the file has " << fileSize;
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, size, offset, /*IsVolatile=*/false);
  if (!buffer)
    return emitError(location) << "weight '" << name << "' needs the file '" << file
                               << "', which cannot be read: " << buffer.getError().message();
  return std::move(*buffer);
}

FailureOr<DenseElementsAttr> readWeight(graph::WeightOp weight) {
  auto buffer = readWeightBytes(weight.getLoc(), weight.getName(), weight.getFile(),
                                weight.getOffset(), weight.getSize());
  if (failed(buffer))
    return failure();
  StringRef bytes = (*buffer)->getBuffer();
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
