//===- WeightBytes.cpp - read the bytes a graph.weight names --------------===//
#include "dialects/Graph/WeightBytes.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"

#include <cstring>

using namespace mlir;

namespace shardc::graph {

FailureOr<std::unique_ptr<llvm::MemoryBuffer>> readWeightBytes(Location location, StringRef name,
                                                               StringRef file, int64_t offset,
                                                               int64_t size) {
  uint64_t fileSize = 0;
  if (std::error_code error = llvm::sys::fs::file_size(file, fileSize))
    return emitError(location) << "weight '" << name << "' needs the file '" << file
                               << "', which cannot be read: " << error.message();
  std::optional<int64_t> end = llvm::checkedAdd(offset, size);
  if (offset < 0 || size < 0 || !end || static_cast<uint64_t>(*end) > fileSize)
    return emitError(location) << "weight '" << name << "' runs past the end of '" << file
                               << "'; expected " << size << " bytes at offset " << offset
                               << " but the file has " << fileSize;
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, size, offset, /*IsVolatile=*/false);
  if (!buffer)
    return emitError(location) << "weight '" << name << "' needs the file '" << file
                               << "', which cannot be read: " << buffer.getError().message();
  return std::move(*buffer);
}

FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readStoredBytes(Location location, StringRef name, StringRef file, int64_t offset, int64_t size,
                std::optional<ArrayRef<int64_t>> partOffsets) {
  if (!partOffsets)
    return readWeightBytes(location, name, file, offset, size);
  // The verifier checked that the parts divide the size.
  int64_t partSize = size / int64_t(partOffsets->size());
  auto stored = llvm::WritableMemoryBuffer::getNewUninitMemBuffer(size_t(size), name);
  if (!stored)
    return emitError(location) << "weight '" << name << "' needs " << size
                               << " bytes of memory, which cannot be allocated";
  char *at = stored->getBufferStart();
  for (int64_t partOffset : *partOffsets) {
    auto part = readWeightBytes(location, name, file, partOffset, partSize);
    if (failed(part))
      return failure();
    std::memcpy(at, (*part)->getBufferStart(), size_t(partSize));
    at += partSize;
  }
  return std::unique_ptr<llvm::MemoryBuffer>(std::move(stored));
}

FailureOr<DenseElementsAttr> readWeight(WeightOp weight) {
  if (weight.getStoredShape() || weight.getBoxOffsets() || weight.getStoredType() ||
      weight.getRepeatBlocks())
    return weight.emitOpError("holds a part or a conversion of its stored bytes; only a plain "
                              "weight's value can be read");
  auto buffer = readStoredBytes(weight.getLoc(), weight.getName(), weight.getFile(),
                                weight.getOffset(), weight.getSize(), weight.getPartOffsets());
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

} // namespace shardc::graph
