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
  if (rt::io::Expected<std::string> file = rt::io::replaceableFile(path.str()); !file)
    return toError(file.error());
  return llvm::Error::success();
}

llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text) {
  rt::io::Expected<rt::io::AtomicFile> file = rt::io::AtomicFile::create(path.str());
  if (!file)
    return toError(file.error());
  if (rt::io::Status status = file->write(text.data(), text.size()); !status)
    return toError(status.error());
  if (rt::io::Status status = file->commit(); !status)
    return toError(status.error());
  return llvm::Error::success();
}

} // namespace shardc::driver
