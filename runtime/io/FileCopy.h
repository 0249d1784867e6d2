//===- FileCopy.h - a whole file read into memory of the process's own ----===//
//
// Weight files are read at load into anonymous memory, not mapped: a file
// the process only maps can change under it. Another process that truncates
// a mapped file makes every later read of the lost pages raise SIGBUS (the
// process dies), and one that rewrites it in place changes the bytes the
// kernels read, past every check made at load (a private mapping shows the
// file's new bytes wherever the process wrote nothing). A copy costs a read
// of the file and gives up sharing the page cache's copy with other
// processes that map the same file; in return what the loader checked is
// what every run reads.
//
// The CRC-32 is taken over the bytes as they are copied, so comparing it
// with the manifest's checks exactly the bytes kept: a file rewritten before
// or while it is read fails that check instead of loading. A file whose size
// changes while it is read is refused too ("changed while it was read").
//
// Parts of the copy can leave memory and come back (drop, restore): a
// weight packed by every step that reads it need not be held twice
// (SafeTensorsFile::hold). Restoring reads the file again, so the read
// records each block's CRC-32 (a block is a page): a block read back must
// have the same, so bytes that differ from what was first read (a file
// rewritten or truncated since) are an error naming the file, never used.
// The file-wide CRC is joined from the blocks' (zlib's crc32_combine), so
// it costs no second pass, and the pieces of the file can be read, and
// checked, by several threads at once. Restoring reads through the
// descriptor the load opened, which the copy keeps: a file replaced by
// rename since (an artifact compiled again in place) still gives the bytes
// loaded. A dropped block is mapped PROT_NONE: a read of it that no hold
// covers faults at once instead of seeing zeros.
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
#include <memory>
#include <string>

namespace shardc::rt::io {

class FileCopy {
public:
  /// The unit drop() lets go and restore() checks: a page, so that little
  /// of a tensor stays behind at its ends (4 bytes of CRC per block).
  static size_t blockSize();

  /// Reads the regular file at `path` whole. Errors name the path ("x: cannot
  /// open: No such file or directory", "x: not a regular file", "x: changed
  /// while it was read (4096 bytes when opened, then it ended after 100)").
  static StatusOr<FileCopy> read(const std::string &path);

  FileCopy();
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

  /// Lets the whole blocks inside [offset, offset + bytes) leave memory;
  /// reading them faults until restore() brings them back. The blocks at
  /// the range's edges, which other bytes share, stay. Thread-safe; const
  /// because what restore() gives back is what was there.
  void drop(size_t offset, size_t bytes) const;

  /// Brings back the dropped blocks of [offset, offset + bytes), read from
  /// the file again and checked against the CRC-32 each had when first
  /// read. Fails, naming the file, if it changed since: "x: changed since
  /// it was loaded: bytes [65536, 131072) differ (CRC-32 expected
  /// 0a1b2c3d, read 5e6f7a8b)" (or its size, or it ends early); those
  /// blocks then stay dropped. Thread-safe.
  Status restore(size_t offset, size_t bytes) const;

  /// How many bytes are dropped now.
  size_t droppedBytes() const;

private:
  struct Blocks;
  void release();

  std::byte *data_ = nullptr;
  size_t size_ = 0;
  std::string path_, crc32_;
  std::unique_ptr<Blocks> blocks_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_FILECOPY_H
