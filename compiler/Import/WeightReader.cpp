//===- WeightReader.cpp - where external data may be read from ----------===//
#include "compiler/Import/WeightReader.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
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

} // namespace shardc::import
