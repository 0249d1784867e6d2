//===- StagedDirectory.cpp - a folder written beside its place, then renamed -===//
#include "runtime/io/StagedDirectory.h"

#include "runtime/io/AtomicFile.h" // syncDirectory
#include "runtime/io/MappedFile.h" // errnoMessage

#include <cerrno>
#include <climits>
#include <cstdio> // renameat2
#include <cstdlib>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io {
namespace {

Status refuse(const std::string &path, const std::string &why) {
  return Status::error("'" + printable(path) + "' " + why + "; refusing to replace it");
}

/// The folder `path` lies in ("" for a bare name: the working folder).
std::string parentOf(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Removes the files of `directory`, then the folder itself. Only files:
/// a replaced folder was checked to hold nothing else, and a staging folder
/// only gets files.
void removeFolderOfFiles(const std::string &directory) {
  if (DIR *listing = ::opendir(directory.c_str())) {
    while (const dirent *entry = ::readdir(listing)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..")
        ::unlinkat(::dirfd(listing), name.c_str(), 0);
    }
    ::closedir(listing);
  }
  ::rmdir(directory.c_str());
}

} // namespace

StatusOr<std::string> checkFolderDestination(const std::string &path,
                                             const ReplaceCheck &replaceable) {
  std::string destination = path;
  while (destination.size() > 1 && destination.back() == '/')
    destination.pop_back();
  if (destination.empty())
    return Status::error("an empty path is no folder to write");
  struct stat info;
  if (::lstat(destination.c_str(), &info) != 0) {
    const int error = errno;
    if (error != ENOENT)
      return Status::error("'" + printable(destination) + "': " + errnoMessage(error));
    const std::string parent = parentOf(destination);
    struct stat folder;
    if (!parent.empty() && (::stat(parent.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode)))
      return Status::error("'" + printable(destination) + "': the folder '" + printable(parent) +
                           "' does not exist");
    return destination;
  }
  if (S_ISLNK(info.st_mode))
    return refuse(destination, "is a symbolic link");
  if (!S_ISDIR(info.st_mode))
    return refuse(destination, "exists and is not a directory");
  char real[PATH_MAX], working[PATH_MAX];
  if (!::realpath(destination.c_str(), real) || !::realpath(".", working))
    return refuse(destination, "cannot be resolved");
  const std::string folder = real, here = working;
  if (folder == "/" || here == folder || here.rfind(folder + "/", 0) == 0)
    return refuse(destination, "is the working folder or a folder above it");
  if (Status status = replaceable(destination); !status)
    return refuse(destination, status.message());
  return destination;
}

StatusOr<std::unique_ptr<StagedDirectory>> StagedDirectory::create(const std::string &requested,
                                                                   ReplaceCheck replaceable) {
  StatusOr<std::string> destination = checkFolderDestination(requested, replaceable);
  if (!destination)
    return destination.status();
  const std::string parent = parentOf(*destination);
  const std::string name = destination->substr(destination->rfind('/') + 1);
  const std::string staging = (parent.empty()  ? ""
                               : parent == "/" ? "/"
                                               : parent + "/") +
                              "." + name + ".partial-" + std::to_string(::getpid());
  // Watched before it exists: a signal right after the mkdir must find it.
  SignalCleanup cleanup(staging);
  // Never a folder that is there already: it may not be ours.
  if (::mkdir(staging.c_str(), 0777) != 0) {
    const int error = errno;
    cleanup.release();
    return Status::error("cannot create '" + printable(staging) + "': " + errnoMessage(error));
  }
  return std::unique_ptr<StagedDirectory>(new StagedDirectory(
      std::move(*destination), staging, std::move(replaceable), std::move(cleanup)));
}

StagedDirectory::~StagedDirectory() {
  if (!committed_)
    removeFolderOfFiles(path_);
}

Status StagedDirectory::commit() {
  if (StatusOr<std::string> checked = checkFolderDestination(destination_, replaceable_); !checked)
    return checked.status();
  struct stat info;
  bool replacing = ::lstat(destination_.c_str(), &info) == 0;
  const unsigned flags = replacing ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, destination_.c_str(), flags) != 0) {
    // A file system without renameat2's flags: remove, then rename (a kill
    // in between loses the old folder, which the exchange never does).
    if (errno != EINVAL)
      return Status::error("cannot move '" + printable(path_) + "' into '" +
                           printable(destination_) + "': " + errnoMessage(errno));
    if (replacing)
      removeFolderOfFiles(destination_);
    if (::rename(path_.c_str(), destination_.c_str()) != 0)
      return Status::error("cannot move '" + printable(path_) + "' into '" +
                           printable(destination_) + "': " + errnoMessage(errno));
    replacing = false;
  }
  committed_ = true;
  syncDirectory(parentOf(destination_));
  // After an exchange the staging name holds the folder replaced.
  if (replacing)
    removeFolderOfFiles(path_);
  cleanup_.release();
  return {};
}

} // namespace shardc::rt::io
