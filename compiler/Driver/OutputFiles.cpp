//===- OutputFiles.cpp - the driver's output paths, checked and written ---===//
#include "compiler/Driver/OutputFiles.h"

#include "runtime/io/AtomicFile.h"

namespace shardc::driver {
namespace {

llvm::Error toError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Error checkOutputFile(llvm::StringRef path) {
  if (rt::StatusOr<std::string> file = rt::io::replaceableFile(path.str()); !file)
    return toError(file.message());
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text) {
  rt::StatusOr<rt::io::AtomicFile> file = rt::io::AtomicFile::create(path.str());
  if (!file)
    return toError(file.message());
  if (rt::Status status = file->write(text.data(), text.size()); !status)
    return toError(status.message());
  if (rt::Status status = file->commit(); !status)
    return toError(status.message());
  return llvm::Error::success();
}

} // namespace shardc::driver
