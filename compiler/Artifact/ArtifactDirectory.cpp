//===- ArtifactDirectory.cpp - where an artifact may be written -----------===//
#include "compiler/Artifact/ArtifactDirectory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <cerrno>
#include <cstdio> // renameat2
#include <cstring>

#include <fcntl.h>

namespace shardc::artifact {
namespace fs = llvm::sys::fs;
namespace {

/// Manifests are a few kilobytes per rank; a larger one is not shardc's.
constexpr uint64_t kMaxManifestBytes = 64 << 20;

llvm::Error refuse(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "-o '" + path + "' " + why + "; refusing to replace it");
}

/// Fails unless `directory` holds a shardc manifest and, besides it, only
/// the regular files that manifest lists.
llvm::Error checkIsArtifact(llvm::StringRef directory) {
  llvm::SmallString<256> manifestPath(directory);
  llvm::sys::path::append(manifestPath, "manifest.json");
  fs::file_status status;
  if (fs::status(manifestPath, status, /*follow=*/false) ||
      status.type() != fs::file_type::regular_file || status.getSize() > kMaxManifestBytes)
    return refuse(directory, "exists and is not an artifact shardc wrote (no manifest.json)");
  auto text = llvm::MemoryBuffer::getFile(manifestPath);
  llvm::Expected<llvm::json::Value> manifest =
      text ? llvm::json::parse((*text)->getBuffer())
           : llvm::Expected<llvm::json::Value>(llvm::errorCodeToError(text.getError()));
  const llvm::json::Object *object = manifest ? manifest->getAsObject() : nullptr;
  const llvm::json::Object *files = object ? object->getObject("files") : nullptr;
  if (!manifest)
    llvm::consumeError(manifest.takeError());
  if (!files || object->getString("format") != "shardc-artifact")
    return refuse(directory, "holds a manifest.json that is not a shardc artifact's");
  std::error_code error;
  for (fs::directory_iterator entry(directory, error, /*follow_symlinks=*/false), end;
       !error && entry != end; entry.increment(error)) {
    llvm::StringRef name = llvm::sys::path::filename(entry->path());
    if (name != "manifest.json" && !files->get(name))
      return refuse(directory, "holds '" + name + "', which is not a file of the artifact");
    // status(), not type(): some file systems do not report types in listings.
    llvm::ErrorOr<fs::basic_file_status> entryStatus = entry->status();
    if (!entryStatus || entryStatus->type() != fs::file_type::regular_file)
      return refuse(directory, "holds '" + name + "', which is not a regular file");
  }
  if (error)
    return refuse(directory, "cannot be listed: " + error.message());
  return llvm::Error::success();
}

/// Removes the files of a folder that held an artifact, then the folder.
void removeArtifactFiles(llvm::StringRef directory) {
  std::error_code error;
  for (fs::directory_iterator entry(directory, error, /*follow_symlinks=*/false), end;
       !error && entry != end; entry.increment(error))
    fs::remove(entry->path());
  fs::remove(directory);
}

} // namespace

llvm::Expected<std::string> checkArtifactDestination(llvm::StringRef path) {
  std::string destination = path.str();
  while (destination.size() > 1 && destination.back() == '/')
    destination.pop_back();
  if (destination.empty())
    return refuse(path, "is empty");
  fs::file_status status;
  if (std::error_code error = fs::status(destination, status, /*follow=*/false)) {
    if (error != std::errc::no_such_file_or_directory)
      return llvm::createStringError(error, "-o '" + destination + "': " + error.message());
    llvm::StringRef parent = llvm::sys::path::parent_path(destination);
    if (!parent.empty() && !fs::is_directory(parent))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "-o '" + destination + "': the folder '" + parent +
                                         "' does not exist");
    return destination;
  }
  if (status.type() == fs::file_type::symlink_file)
    return refuse(destination, "is a symbolic link");
  if (status.type() != fs::file_type::directory_file)
    return refuse(destination, "exists and is not a directory");
  llvm::SmallString<256> real, working;
  if (fs::real_path(destination, real) || fs::current_path(working) ||
      fs::real_path(working, working))
    return refuse(destination, "cannot be resolved");
  if (working == real || llvm::StringRef(working).starts_with((real + "/").str()) || real == "/")
    return refuse(destination, "is the working folder or a folder above it");
  if (llvm::Error error = checkIsArtifact(destination))
    return error;
  return destination;
}

llvm::Expected<std::unique_ptr<StagingDirectory>>
StagingDirectory::create(llvm::StringRef requested) {
  llvm::Expected<std::string> destination = checkArtifactDestination(requested);
  if (!destination)
    return destination.takeError();
  llvm::SmallString<256> staging(llvm::sys::path::parent_path(*destination));
  llvm::sys::path::append(staging, "." + llvm::sys::path::filename(*destination) + ".partial-" +
                                       llvm::Twine(llvm::sys::Process::getProcessId()));
  // Watched before it exists: a signal right after the mkdir must find it.
  rt::io::SignalCleanup cleanup(std::string(staging.str()));
  // Never reuse a folder that is there already: it may not be ours.
  if (std::error_code error = fs::create_directory(staging, /*IgnoreExisting=*/false)) {
    cleanup.release();
    return llvm::createStringError(error, "cannot create '" + staging + "': " + error.message());
  }
  return std::unique_ptr<StagingDirectory>(
      new StagingDirectory(std::move(*destination), std::string(staging), std::move(cleanup)));
}

StagingDirectory::~StagingDirectory() {
  if (!committed_)
    removeArtifactFiles(path_);
}

llvm::Error StagingDirectory::commit() {
  // The destination may have changed while the artifact was compiled.
  if (llvm::Expected<std::string> checked = checkArtifactDestination(destination_); !checked)
    return checked.takeError();
  bool replacing = fs::exists(destination_);
  int flags = replacing ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, destination_.c_str(), flags) != 0) {
    // A file system without renameat2's flags: remove, then rename.
    if (errno != EINVAL)
      return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                     "cannot move the artifact into '" + destination_ +
                                         "': " + std::strerror(errno));
    if (replacing)
      removeArtifactFiles(destination_);
    if (std::error_code error = fs::rename(path_, destination_))
      return llvm::createStringError(error, "cannot move the artifact into '" + destination_ +
                                                "': " + error.message());
    replacing = false;
  }
  committed_ = true;
  // After an exchange the staging folder holds the artifact replaced.
  if (replacing)
    removeArtifactFiles(path_);
  cleanup_.release();
  return llvm::Error::success();
}

} // namespace shardc::artifact
