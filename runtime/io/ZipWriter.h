//===- ZipWriter.h - Stored (uncompressed) zip archives, streamed ---------===//
//
// Writes what numpy.savez writes: each entry stored uncompressed, so np.load
// can read it and so writing costs no more than copying the bytes. Entries
// are streamed to the file as they are added (an output tensor is never
// copied into an archive buffer); only the central directory is kept in
// memory. zip64 records are added exactly when a size, an offset or the
// entry count needs them (or always, with forceZip64, for tests).
//
// Every entry carries the fixed timestamp 1980-01-01 00:00, the earliest a
// zip can hold, so the same tensors always give the same bytes (and the same
// CRC in a manifest).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_ZIPWRITER_H
#define SHARDC_RUNTIME_IO_ZIPWRITER_H

#include "runtime/io/AtomicFile.h"
#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardc::rt::io {

/// A piece of an entry's contents.
struct ByteSpan {
  const void *data;
  size_t size;
};

class ZipWriter {
public:
  /// Writes into `file` (which must outlive the writer), from its current offset.
  explicit ZipWriter(AtomicFile &file, bool forceZip64 = false)
      : file_(file), forceZip64_(forceZip64) {}

  /// Appends a stored entry whose contents are the pieces, concatenated.
  Status addStored(const std::string &name, const std::vector<ByteSpan> &pieces);

  /// Writes the central directory and end records; the caller commits the file.
  Status finish();

private:
  struct CentralRecord {
    std::string name;
    uint32_t crc32;
    uint64_t size;
    uint64_t localHeaderOffset;
  };

  AtomicFile &file_;
  bool forceZip64_;
  std::vector<CentralRecord> records_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_ZIPWRITER_H
