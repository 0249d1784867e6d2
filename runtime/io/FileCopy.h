//===- FileCopy.h - a whole file read into memory of the process's own ----===//
//
// Weight files are read once, at load, into anonymous memory, and never
// again: a file the process only maps can change under it. Another process
// that truncates a mapped file makes every later read of the lost pages
// raise SIGBUS (the process dies), and one that rewrites it in place changes
// the bytes the kernels read, past every check made at load (a private
// mapping shows the file's new bytes wherever the process wrote nothing).
// A copy costs a read of the file (no slower than faulting its pages in)
// and gives up sharing the page cache's copy with other processes that map
// the same file; in return what the loader checked is what every run reads.
//
// The CRC-32 is taken over the bytes as they are copied, so comparing it
// with the manifest's checks exactly the bytes kept: a file rewritten before
// or while it is read fails that check instead of loading. A file whose size
// changes while it is read is refused too ("changed while it was read").
//
// The memory is page-aligned (an mmap of its own), so offsets aligned in the
// file are as aligned in memory, and read-only once filled: writing through
// a view into it faults, as with the mapping it replaces.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_FILECOPY_H
#define SHARDC_RUNTIME_IO_FILECOPY_H

#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardc::rt::io {

class FileCopy {
public:
  /// Reads the regular file at `path` whole. Errors name the path ("x: cannot
  /// open: No such file or directory", "x: not a regular file", "x: changed
  /// while it was read (4096 bytes when opened, then it ended after 100)").
  static StatusOr<FileCopy> read(const std::string &path);

  FileCopy() = default;
  FileCopy(FileCopy &&other) noexcept;
  FileCopy &operator=(FileCopy &&other) noexcept;
  FileCopy(const FileCopy &) = delete;
  FileCopy &operator=(const FileCopy &) = delete;
  ~FileCopy();

  /// The bytes; null when the file was empty. The address does not change
  /// when the FileCopy is moved.
  const std::byte *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// The CRC-32 of data()'s bytes (Checksum.h), as 8 lowercase hex digits.
  const std::string &crc32() const { return crc32_; }

private:
  void release();

  std::byte *data_ = nullptr;
  size_t size_ = 0;
  std::string path_, crc32_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_FILECOPY_H
