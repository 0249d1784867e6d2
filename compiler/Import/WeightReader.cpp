//===- WeightReader.cpp - load the bytes a weight refers to ---------------===//
#include "compiler/Import/WeightReader.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace shardc::import {

FailureOr<std::string> resolveExternalData(Location location, StringRef name,
                                           StringRef modelPath, StringRef file) {
  StringRef folder = llvm::sys::path::parent_path(modelPath);
  if (folder.empty())
    folder = ".";
  auto outside = [&](StringRef why) {
    return emitError(location) << "initializer '" << name << "' has external data at '" << file
                               << "', " << why << "; expected a file inside the model's folder '"
                               << folder << "'";
  };
  if (llvm::sys::path::is_absolute(file))
    return outside("an absolute path");
  for (StringRef component : llvm::make_range(llvm::sys::path::begin(file),
                                              llvm::sys::path::end(file)))
    if (component == "..")
      return outside("which leaves it through '..'");
  SmallString<256> path(folder);
  llvm::sys::path::append(path, file);
  SmallString<256> realFolder, realFile;
  if (!llvm::sys::fs::exists(path) || llvm::sys::fs::real_path(folder, realFolder) ||
      llvm::sys::fs::real_path(path, realFile))
    return std::string(path);
  if (!StringRef(realFile).starts_with((realFolder + llvm::sys::path::get_separator()).str()))
    return outside("which resolves (through a symbolic link) to '" + realFile.str().str() + "'");
  return std::string(path);
}

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
