//===- MappedFile.h - A whole file mapped read-only -----------------------===//
//
// npz and npy inputs are mapped, so a stored entry is copied exactly once,
// into the tensor that owns it; the mapping lives only while they are read.
//
// The mapping is PROT_READ: writing through a pointer into it faults. If
// another process truncates the file while it is mapped, touching the lost
// pages raises SIGBUS; that is inherent to mmap and the reason artifacts are
// written to a temporary name and renamed into place (AtomicFile), never
// rewritten in place. Weight files, which a session holds for as long as
// it lives, are therefore copied instead (FileCopy.h).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_MAPPEDFILE_H
#define SHARDC_RUNTIME_IO_MAPPEDFILE_H

#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <string>

namespace shardc::rt::io {

class MappedFile {
public:
  /// Maps the regular file at `path`. Errors name the path ("x: cannot open:
  /// No such file or directory", "x: not a regular file").
  static StatusOr<MappedFile> open(const std::string &path);

  MappedFile() = default;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// The file's bytes; null when the file is empty. The address does not
  /// change when the MappedFile is moved.
  const std::byte *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }

private:
  void unmap();

  const std::byte *data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

/// strerror(errno) without strerror's shared buffer ("No such file or directory").
std::string errnoMessage(int error);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_MAPPEDFILE_H
