//===- AtomicFile.cpp - Write a file under a temporary name, then rename --===//

#include "runtime/io/AtomicFile.h"

#include "runtime/io/MappedFile.h" // errnoMessage

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io {

namespace {
/// "dir/" and "name" of a path ("" for a bare name: the working directory).
std::pair<std::string, std::string> splitPath(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

} // namespace

void syncDirectory(const std::string &dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

StatusOr<std::string> replaceableFile(const std::string &path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    int error = errno;
    if (error != ENOENT)
      return Status::error(path + ": cannot be written: " + errnoMessage(error));
    std::string dir = splitPath(path).first;
    struct stat folder;
    if (!dir.empty() && (::stat(dir.c_str(), &folder) != 0 || !S_ISDIR(folder.st_mode)))
      return Status::error(path + ": the folder '" +
                           dir.substr(0, dir.size() > 1 ? dir.size() - 1 : 1) + "' does not exist");
    return path;
  }
  if (S_ISREG(info.st_mode))
    return path;
  if (S_ISDIR(info.st_mode))
    return Status::error(path + ": is a directory; expected a file name");
  if (S_ISLNK(info.st_mode)) {
    char target[PATH_MAX];
    if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::realpath(path.c_str(), target))
      return std::string(target);
    return Status::error(path + ": is a symbolic link to something other than a regular file; "
                                "refusing to replace it");
  }
  return Status::error(
      path + ": is not a regular file (a device, FIFO or socket); refusing to replace it");
}

StatusOr<AtomicFile> AtomicFile::create(const std::string &requested) {
  StatusOr<std::string> destination = replaceableFile(requested);
  if (!destination)
    return destination.status();
  const std::string &path = *destination;
  auto [dir, name] = splitPath(path);
  if (name.empty())
    return Status::error(path + ": not a file name");

  // pid + a process-wide counter make the name unique among concurrent
  // writers; O_EXCL turns the rare leftover from a crashed run into a retry
  // instead of a clobber. Unlike mkstemp, open() applies the umask, so the
  // result has the permissions a direct write would have had.
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tempPath =
        dir + "." + name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    // Watched before it exists: a signal right after the open must find it.
    SignalCleanup cleanup(tempPath);
    int fd = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0)
      return AtomicFile(path, std::move(tempPath), fd, std::move(cleanup));
    int error = errno;
    cleanup.release(); // the name is someone else's
    if (error != EEXIST)
      return Status::error(path + ": cannot create '" + tempPath + "': " + errnoMessage(error));
  }
  return Status::error(path + ": cannot create a temporary file next to it");
}

AtomicFile::AtomicFile(AtomicFile &&other) noexcept
    : path_(std::move(other.path_)), tempPath_(std::move(other.tempPath_)),
      fd_(std::exchange(other.fd_, -1)), offset_(other.offset_),
      committed_(std::exchange(other.committed_, true)), cleanup_(std::move(other.cleanup_)) {}

AtomicFile::~AtomicFile() {
  if (!committed_)
    discard();
}

void AtomicFile::discard() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  if (!tempPath_.empty())
    ::unlink(tempPath_.c_str());
  cleanup_.release();
  committed_ = true; // nothing left to clean up
}

Status AtomicFile::write(const void *data, size_t size) {
  if (fd_ < 0)
    return Status::error(path_ + ": write after the file was closed");
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    // Linux writes at most ~2 GiB per call; keep chunks well below that.
    size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
    ssize_t written = ::write(fd_, bytes, chunk);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(path_ + ": write failed: " + errnoMessage(errno));
    }
    bytes += written;
    size -= static_cast<size_t>(written);
    offset_ += static_cast<uint64_t>(written);
  }
  return {};
}

Status AtomicFile::writeZeros(size_t count) {
  static const char kZeros[4096] = {};
  while (count > 0) {
    size_t chunk = count < sizeof(kZeros) ? count : sizeof(kZeros);
    if (Status status = write(kZeros, chunk); !status)
      return status;
    count -= chunk;
  }
  return {};
}

Status AtomicFile::commit() {
  if (fd_ < 0)
    return Status::error(path_ + ": commit after the file was closed");
  // fsync before rename: otherwise a crash can leave the new name pointing at
  // a file whose data never reached the disk.
  if (::fsync(fd_) != 0) {
    std::string message = path_ + ": cannot flush to disk: " + errnoMessage(errno);
    discard();
    return Status::error(message);
  }
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    std::string message = path_ + ": cannot close: " + errnoMessage(errno);
    discard();
    return Status::error(message);
  }
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    std::string message =
        path_ + ": cannot rename '" + tempPath_ + "' over it: " + errnoMessage(errno);
    discard();
    return Status::error(message);
  }
  committed_ = true;
  cleanup_.release();
  syncDirectory(splitPath(path_).first);
  return {};
}

} // namespace shardc::rt::io
