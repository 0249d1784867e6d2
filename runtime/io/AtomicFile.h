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

#include "runtime/io/ErrorText.h"
#include "runtime/io/SignalCleanup.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardc::rt::io {

/// The file an atomic write to `path` replaces: `path` itself when it is a
/// regular file or does not exist yet (its folder must), the target of a
/// symlink to a regular file (the link stays). Anything else is refused,
/// since renaming over it would replace it: a directory, a device
/// ("--outputs /dev/full" run as root), a FIFO, a socket, a dangling link.
StatusOr<std::string> replaceableFile(const std::string &path);

/// Makes a rename in the folder `dir` ("" for the working one) durable:
/// without syncing the folder, a crash right after it could lose the new
/// name even though the data was synced. Best effort: some file systems
/// refuse fsync on a directory.
void syncDirectory(const std::string &dir);

class AtomicFile {
public:
  /// Creates `<dir>/.<name>.tmp.<pid>.<n>` next to the file `path` names
  /// (replaceableFile), with the mode a plain create would give (0666 minus
  /// the umask). The temporary is removed if the process is stopped by a
  /// signal (SignalCleanup).
  static StatusOr<AtomicFile> create(const std::string &path);

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
  AtomicFile(std::string path, std::string tempPath, int fd, SignalCleanup cleanup)
      : path_(std::move(path)), tempPath_(std::move(tempPath)), fd_(fd),
        cleanup_(std::move(cleanup)) {}
  void discard();

  std::string path_;
  std::string tempPath_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  bool committed_ = false;
  SignalCleanup cleanup_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_ATOMICFILE_H
