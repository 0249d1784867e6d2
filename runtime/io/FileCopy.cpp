//===- FileCopy.cpp - a whole file read into memory of the process's own --===//

#include "runtime/io/FileCopy.h"

#include "runtime/io/Checksum.h"
#include "runtime/io/MappedFile.h" // errnoMessage

#include <algorithm>
#include <cerrno>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io {

namespace {

/// Closes the descriptor however the read ends.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

/// pread that retries when interrupted; the count read, 0 at the end of the
/// file, or -1 with errno set.
ssize_t readAt(int fd, std::byte *into, size_t bytes, size_t offset) {
  for (;;) {
    ssize_t got = ::pread(fd, into, bytes, static_cast<off_t>(offset));
    if (got >= 0 || errno != EINTR)
      return got;
  }
}

/// Reads in pieces this big, so that each piece's CRC is taken while it is
/// still in the cache.
constexpr size_t kPiece = size_t(4) << 20;

} // namespace

StatusOr<FileCopy> FileCopy::read(const std::string &path) {
  // O_NONBLOCK: opening a FIFO put in the file's place must not wait for a
  // writer (it is then refused below); reading a regular file ignores it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoMessage(errno));
  Descriptor closing{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return Status::error(path + ": cannot stat: " + errnoMessage(errno));
  // A directory or FIFO has no size to read; say so instead of failing later.
  if (!S_ISREG(info.st_mode))
    return Status::error(path + ": not a regular file");

  FileCopy copy;
  copy.path_ = path;
  copy.size_ = static_cast<size_t>(info.st_size);
  if (copy.size_ != 0) {
    void *address =
        ::mmap(nullptr, copy.size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (address == MAP_FAILED)
      return Status::error(path + ": cannot allocate " + std::to_string(copy.size_) +
                           " bytes to read it into: " + errnoMessage(errno));
    copy.data_ = static_cast<std::byte *>(address);
  }
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  uint32_t crc = 0;
  size_t done = 0;
  auto changed = [&](const std::string &found) {
    return Status::error(path + ": changed while it was read (" + std::to_string(copy.size_) +
                         " bytes when opened, " + found + ")");
  };
  while (done < copy.size_) {
    ssize_t got = readAt(fd, copy.data_ + done, std::min(kPiece, copy.size_ - done), done);
    if (got < 0)
      return Status::error(path + ": read failed: " + errnoMessage(errno));
    if (got == 0) // truncated since fstat
      return changed("then it ended after " + std::to_string(done));
    crc = crc32Update(crc, copy.data_ + done, static_cast<size_t>(got));
    done += static_cast<size_t>(got);
  }
  // A file that grew since fstat holds bytes the copy lacks.
  std::byte extra;
  if (ssize_t got = readAt(fd, &extra, 1, done); got != 0)
    return got < 0 ? Status::error(path + ": read failed: " + errnoMessage(errno))
                   : changed("then it held more");
  copy.crc32_ = crc32Hex(crc);
  // Read-only from here on, as a mapping of the file was: a kernel that
  // writes into a weight faults instead of changing it for every reader.
  if (copy.data_ && ::mprotect(copy.data_, copy.size_, PROT_READ) != 0)
    return Status::error(path + ": cannot make its copy read-only: " + errnoMessage(errno));
  return copy;
}

FileCopy::FileCopy(FileCopy &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)), crc32_(std::move(other.crc32_)) {}

FileCopy &FileCopy::operator=(FileCopy &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    crc32_ = std::move(other.crc32_);
  }
  return *this;
}

FileCopy::~FileCopy() { release(); }

void FileCopy::release() {
  if (data_)
    ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

} // namespace shardc::rt::io
