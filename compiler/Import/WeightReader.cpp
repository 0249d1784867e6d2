//===- WeightReader.cpp - where weight bytes may be read from --------------===//
#include "compiler/Import/WeightReader.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace shardc::import {
namespace {

/// `path` made absolute; `dotDot` also takes '..' away (by its text, not
/// through the file system).
SmallString<256> absolute(StringRef path, bool dotDot) {
  SmallString<256> result(path);
  llvm::sys::fs::make_absolute(result);
  llvm::sys::path::remove_dots(result, dotDot);
  return result;
}

bool isInside(StringRef path, StringRef folder) {
  std::string prefix = folder.str(); // "/" ends in a separator already
  if (!llvm::sys::path::is_separator(prefix.back()))
    prefix += llvm::sys::path::get_separator();
  return path.starts_with(prefix);
}

} // namespace

FailureOr<std::string> confineWeightFile(Location location, const Twine &subject, StringRef file,
                                         StringRef base, ArrayRef<std::string> folders,
                                         const Twine &allowed) {
  SmallString<256> path(file);
  if (!llvm::sys::path::is_absolute(file)) {
    path = base;
    llvm::sys::path::append(path, file);
  }
  SmallString<256> lexical = absolute(path, /*dotDot=*/true);
  bool lexicallyInside = llvm::any_of(folders, [&](const std::string &folder) {
    return isInside(lexical, absolute(folder, true));
  });
  SmallString<256> real;
  bool exists = !llvm::sys::fs::real_path(path, real);
  bool inside = !exists ? lexicallyInside : llvm::any_of(folders, [&](const std::string &folder) {
    SmallString<256> realFolder;
    return !llvm::sys::fs::real_path(folder, realFolder) && isInside(real, realFolder);
  });
  if (inside)
    return absolute(path, /*dotDot=*/false).str().str();
  InFlightDiagnostic error = emitError(location) << subject << " '" << file << "'";
  if (!lexicallyInside && StringRef(lexical) != file)
    error << ", which resolves to '" << lexical << "'";
  else if (lexicallyInside)
    error << ", which resolves (through a symbolic link) to '" << real << "'";
  return error << "; expected a file inside " << allowed;
}

FailureOr<std::string> resolveExternalData(Location location, StringRef name, StringRef modelPath,
                                           StringRef file) {
  StringRef folder = llvm::sys::path::parent_path(modelPath);
  if (folder.empty())
    folder = ".";
  std::string subject = ("initializer '" + name + "' has external data at").str();
  std::string allowed = ("the model's folder '" + folder + "'").str();
  auto refuse = [&](StringRef why) {
    return emitError(location) << subject << " '" << file << "', " << why
                               << "; expected a file inside " << allowed;
  };
  if (llvm::sys::path::is_absolute(file))
    return refuse("an absolute path");
  for (StringRef component :
       llvm::make_range(llvm::sys::path::begin(file), llvm::sys::path::end(file)))
    if (component == "..")
      return refuse("which leaves it through '..'");
  return confineWeightFile(location, subject, file, folder, {folder.str()}, allowed);
}

} // namespace shardc::import
