//===- AtomicFile.h - Write a file under a temporary name, then rename ----===//
//
// A writer that fails half-way (disk full, bad tensor, killed process) must
// not leave a truncated output.npz or rank0.safetensors that a later run
// would read. AtomicFile writes to a fresh temporary file in the destination's
// directory (same file system, so rename is atomic) and renames it over the
// destination only in commit(); destroying it uncommitted removes the
// temporary. Readers therefore see the old file or the complete new one.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_ATOMICFILE_H
#define SHARDC_RUNTIME_IO_ATOMICFILE_H

#include "runtime/io/Expected.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardc::rt::io {

class AtomicFile {
public:
  /// Creates `<dir>/.<name>.tmp.<pid>.<n>` next to `path`, with the mode a
  /// plain create would give (0666 minus the umask).
  static Expected<AtomicFile> create(const std::string &path);

  AtomicFile(AtomicFile &&other) noexcept;
  AtomicFile &operator=(AtomicFile &&other) = delete;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFile();

  /// Appends bytes, retrying short writes and EINTR.
  Status write(const void *data, size_t size);
  Status write(const std::string &bytes) { return write(bytes.data(), bytes.size()); }
  /// Appends `count` zero bytes (padding between tensors).
  Status writeZeros(size_t count);
  /// Bytes written so far: the offset the next write lands at.
  uint64_t offset() const { return offset_; }

  /// Flushes to disk, closes and renames over the destination. After a
  /// failure the temporary is removed and the destination is untouched.
  Status commit();

  const std::string &path() const { return path_; }

private:
  AtomicFile(std::string path, std::string tempPath, int fd)
      : path_(std::move(path)), tempPath_(std::move(tempPath)), fd_(fd) {}
  void discard();

  std::string path_;
  std::string tempPath_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  bool committed_ = false;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_ATOMICFILE_H
