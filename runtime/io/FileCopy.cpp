//===- FileCopy.cpp - a whole file read into memory of the process's own --===//

#include "runtime/io/FileCopy.h"

#include "runtime/io/Checksum.h"
#include "runtime/io/MappedFile.h" // errnoMessage

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc::rt::io {

/// What drop() and restore() need: the file, each block's CRC-32 as first
/// read, and which blocks are dropped.
struct FileCopy::Blocks {
  /// The descriptor the copy was read through, kept for restore().
  int fd = -1;
  /// Each block's CRC-32 as the load read it.
  std::vector<uint32_t> crc;
  std::vector<bool> dropped;
  size_t droppedBytes = 0;
  std::mutex lock;

  ~Blocks() {
    if (fd >= 0)
      ::close(fd);
  }
};

namespace {

/// pread that retries when interrupted; the count read, 0 at the end of the
/// file, or -1 with errno set.
ssize_t readAt(int fd, std::byte *into, size_t bytes, size_t offset) {
  for (;;) {
    ssize_t got = ::pread(fd, into, bytes, static_cast<off_t>(offset));
    if (got >= 0 || errno != EINTR)
      return got;
  }
}

/// Reads exactly [offset, offset + bytes) into `into`; how many bytes it
/// got before the file ended, or -1 with errno set.
ssize_t readFully(int fd, std::byte *into, size_t bytes, size_t offset) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t got = readAt(fd, into + done, bytes - done, offset + done);
    if (got <= 0)
      return got < 0 ? got : static_cast<ssize_t>(done);
    done += static_cast<size_t>(got);
  }
  return static_cast<ssize_t>(done);
}

/// Reads in pieces this big (a whole number of blocks: pages are at most
/// this big), so that each piece's CRC is taken while it is still in the
/// cache.
constexpr size_t kPiece = size_t(1) << 20;

/// The most threads that read one file.
constexpr size_t kMaxReaders = 4;

/// Maps [begin, begin + bytes) of the copy anew, empty: its pages are given
/// back. PROT_NONE to drop it, writable to fill it again.
bool remap(std::byte *begin, size_t bytes, int protection) {
  return ::mmap(begin, bytes, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                -1, 0) != MAP_FAILED;
}

} // namespace

size_t FileCopy::blockSize() {
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

StatusOr<FileCopy> FileCopy::read(const std::string &path) {
  // O_NONBLOCK: opening a FIFO put in the file's place must not wait for a
  // writer (it is then refused below); reading a regular file ignores it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoMessage(errno));
  FileCopy copy;
  copy.blocks_->fd = fd;
  copy.path_ = path;
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return Status::error(path + ": cannot stat: " + errnoMessage(errno));
  // A directory or FIFO has no size to read; say so instead of failing later.
  if (!S_ISREG(info.st_mode))
    return Status::error(path + ": not a regular file");

  const size_t size = static_cast<size_t>(info.st_size);
  if (size != 0) {
    void *address =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (address == MAP_FAILED)
      return Status::error(path + ": cannot allocate " + std::to_string(size) +
                           " bytes to read it into: " + errnoMessage(errno));
    copy.data_ = static_cast<std::byte *>(address);
    copy.size_ = size;
  }
  const size_t blockBytes = blockSize();
  Blocks &blocks = *copy.blocks_;
  blocks.crc.assign((size + blockBytes - 1) / blockBytes, 0);
  blocks.dropped.assign(blocks.crc.size(), false);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  // Readers take the pieces in turn, so one slowed by the rest of the
  // machine takes fewer; each piece's CRC-32 is joined from its blocks'.
  const size_t pieces = (size + kPiece - 1) / kPiece;
  std::vector<uint32_t> pieceCrc(pieces, 0);
  std::atomic<size_t> next{0};
  std::mutex failing;
  size_t endedAt = size; // where a piece found the file ending
  int readError = 0;
  auto readPieces = [&] {
    const Crc32Joiner joinBlock(blockBytes);
    for (size_t p; (p = next.fetch_add(1)) < pieces;) {
      const size_t from = p * kPiece, bytes = std::min(kPiece, size - from);
      const ssize_t got = readFully(fd, copy.data_ + from, bytes, from);
      if (got < 0 || static_cast<size_t>(got) < bytes) {
        const int error = got < 0 ? errno : 0;
        std::lock_guard<std::mutex> guard(failing);
        readError = readError ? readError : error;
        endedAt = std::min(endedAt, from + static_cast<size_t>(std::max<ssize_t>(got, 0)));
        next = pieces; // the others stop too
        return;
      }
      for (size_t b = from / blockBytes; b * blockBytes < from + bytes; ++b) {
        const size_t begin = b * blockBytes, length = std::min(blockBytes, size - begin);
        blocks.crc[b] = crc32Update(0, copy.data_ + begin, length);
        pieceCrc[p] = begin == from            ? blocks.crc[b]
                      : length == blockBytes ? joinBlock(pieceCrc[p], blocks.crc[b])
                                             : crc32Combine(pieceCrc[p], blocks.crc[b], length);
      }
    }
  };
  // A copy from the page cache is bound by page faults and memory, not by
  // one core's speed: a few readers share it (GPT-2-small's 652 MB on two
  // cores: 0.46-0.50 s read by one, 0.25-0.29 s by two).
  const size_t readers =
      std::min<size_t>({kMaxReaders, std::max(1u, std::thread::hardware_concurrency()), pieces});
  std::vector<std::thread> helpers;
  for (size_t r = 1; r < readers; ++r) {
    try {
      helpers.emplace_back(readPieces);
    } catch (const std::system_error &) {
      break; // no more threads: the ones there are read it all
    }
  }
  readPieces();
  for (std::thread &helper : helpers)
    helper.join();
  if (readError)
    return Status::error(path + ": read failed: " + errnoMessage(readError));
  if (endedAt < size) // truncated since fstat
    return Status::error(path + ": changed while it was read (" + std::to_string(size) +
                         " bytes when opened, then it ended after " + std::to_string(endedAt) +
                         ")");
  // A file that grew since fstat holds bytes the copy lacks.
  std::byte extra;
  if (ssize_t got = readAt(fd, &extra, 1, size); got != 0)
    return got < 0 ? Status::error(path + ": read failed: " + errnoMessage(errno))
                   : Status::error(path + ": changed while it was read (" + std::to_string(size) +
                                   " bytes when opened, then it held more)");
  uint32_t crc = pieces ? pieceCrc[0] : 0;
  const Crc32Joiner joinPiece(kPiece);
  for (size_t p = 1; p < pieces; ++p) {
    const size_t bytes = std::min(kPiece, size - p * kPiece);
    crc = bytes == kPiece ? joinPiece(crc, pieceCrc[p]) : crc32Combine(crc, pieceCrc[p], bytes);
  }
  copy.crc32_ = crc32Hex(crc);
  // Read-only from here on, as a mapping of the file was: a kernel that
  // writes into a weight faults instead of changing it for every reader.
  if (copy.data_ && ::mprotect(copy.data_, copy.size_, PROT_READ) != 0)
    return Status::error(path + ": cannot make its copy read-only: " + errnoMessage(errno));
  return copy;
}

void FileCopy::drop(size_t offset, size_t bytes) const {
  if (!data_)
    return;
  const size_t blockBytes = blockSize();
  const size_t end = std::min(offset + bytes, size_);
  const size_t first = (offset + blockBytes - 1) / blockBytes, last = end / blockBytes;
  std::lock_guard<std::mutex> guard(blocks_->lock);
  Blocks &blocks = *blocks_;
  for (size_t b = first; b < last; ++b) {
    if (blocks.dropped[b])
      continue;
    // A run of blocks still in memory, given back at once.
    size_t runEnd = b + 1;
    while (runEnd < last && !blocks.dropped[runEnd])
      ++runEnd;
    // Failure (too many mappings) only leaves the blocks where they were.
    if (remap(data_ + b * blockBytes, (runEnd - b) * blockBytes, PROT_NONE)) {
      for (size_t d = b; d < runEnd; ++d)
        blocks.dropped[d] = true;
      blocks.droppedBytes += (runEnd - b) * blockBytes;
    }
    b = runEnd - 1;
  }
}

Status FileCopy::restore(size_t offset, size_t bytes) const {
  if (!data_)
    return {};
  const size_t blockBytes = blockSize();
  const size_t end = std::min(offset + bytes, size_);
  std::lock_guard<std::mutex> guard(blocks_->lock);
  Blocks &blocks = *blocks_;
  for (size_t b = offset / blockBytes; b * blockBytes < end; ++b) {
    if (!blocks.dropped[b])
      continue;
    size_t runEnd = b + 1;
    while (runEnd * blockBytes < end && blocks.dropped[runEnd])
      ++runEnd;
    std::byte *begin = data_ + b * blockBytes;
    // Whole blocks but the file's last, which may end inside a page.
    const size_t runBytes = std::min(runEnd * blockBytes, size_) - b * blockBytes;
    auto changed = [&](const std::string &how) {
      // What was read is not the weights: it leaves memory again.
      (void)remap(begin, (runEnd - b) * blockBytes, PROT_NONE);
      return Status::error(path_ + ": changed since it was loaded" + how);
    };
    struct stat info;
    if (::fstat(blocks.fd, &info) != 0)
      return Status::error(path_ + ": cannot stat: " + errnoMessage(errno));
    if (static_cast<size_t>(info.st_size) != size_)
      return Status::error(path_ + ": changed since it was loaded (" + std::to_string(size_) +
                           " bytes then, " + std::to_string(info.st_size) + " now)");
    if (!remap(begin, (runEnd - b) * blockBytes, PROT_READ | PROT_WRITE))
      return Status::error(path_ + ": cannot map memory to read it again into: " +
                           errnoMessage(errno));
    ssize_t got = readFully(blocks.fd, begin, runBytes, b * blockBytes);
    if (got < 0) {
      const int error = errno;
      (void)remap(begin, (runEnd - b) * blockBytes, PROT_NONE);
      return Status::error(path_ + ": read failed: " + errnoMessage(error));
    }
    if (static_cast<size_t>(got) < runBytes)
      return changed(" (it ends after " +
                     std::to_string(b * blockBytes + static_cast<size_t>(got)) + " bytes)");
    for (size_t d = b; d < runEnd; ++d) {
      const size_t from = d * blockBytes, to = std::min(from + blockBytes, size_);
      const uint32_t crc = crc32Update(0, data_ + from, to - from);
      if (crc != blocks.crc[d])
        return changed(": bytes [" + std::to_string(from) + ", " + std::to_string(to) +
                       ") differ (CRC-32 expected " + crc32Hex(blocks.crc[d]) + ", read " +
                       crc32Hex(crc) + ")");
    }
    if (::mprotect(begin, (runEnd - b) * blockBytes, PROT_READ) != 0) {
      const int error = errno;
      (void)remap(begin, (runEnd - b) * blockBytes, PROT_NONE);
      return Status::error(path_ + ": cannot make its copy read-only: " + errnoMessage(error));
    }
    for (size_t d = b; d < runEnd; ++d)
      blocks.dropped[d] = false;
    blocks.droppedBytes -= (runEnd - b) * blockBytes;
    b = runEnd - 1;
  }
  return {};
}

size_t FileCopy::droppedBytes() const {
  if (!data_)
    return 0;
  std::lock_guard<std::mutex> guard(blocks_->lock);
  return blocks_->droppedBytes;
}

FileCopy::FileCopy() : blocks_(std::make_unique<Blocks>()) {}

FileCopy::FileCopy(FileCopy &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      path_(std::move(other.path_)), crc32_(std::move(other.crc32_)),
      blocks_(std::move(other.blocks_)) {}

FileCopy &FileCopy::operator=(FileCopy &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
    crc32_ = std::move(other.crc32_);
    blocks_ = std::move(other.blocks_);
  }
  return *this;
}

FileCopy::~FileCopy() { release(); }

void FileCopy::release() {
  if (data_)
    ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  blocks_.reset();
}

} // namespace shardc::rt::io
