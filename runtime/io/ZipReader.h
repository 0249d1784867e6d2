//===- ZipReader.h - Entries of a zip archive held in memory --------------===//
//
// Enough of zip to read what numpy.savez / savez_compressed write, and to
// refuse everything else clearly: stored and deflated entries, zip64 sizes and
// offsets (numpy's zipfile writes zip64 local headers for every entry), data
// descriptors. Not supported: encryption, other compression methods,
// multi-disk archives, archives with data prepended (self-extractors).
//
// The central directory is the authority for names, sizes and CRCs, as in
// every unzip: local headers are only used to find where an entry's data
// starts (numpy's local headers carry 0xffffffff placeholder sizes). Every
// offset and length read from the archive is checked against the buffer, and
// an entry's data must lie before the central directory.
//
// Errors carry no file name; the caller (Npz) adds it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_ZIPREADER_H
#define SHARDC_RUNTIME_IO_ZIPREADER_H

#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardc::rt::io {

/// One central directory record, zip64 fields already resolved.
struct ZipEntry {
  std::string name;
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc32 = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint64_t localHeaderOffset = 0;
};

class ZipReader {
public:
  /// Parses the end record(s) and the central directory of the archive in
  /// data[0, size), which must outlive the reader. Errors: "not a zip
  /// archive", "truncated central directory", ...
  static StatusOr<ZipReader> open(const std::byte *data, size_t size);

  /// In central directory order (the order the writer added them).
  const std::vector<ZipEntry> &entries() const { return entries_; }

  /// The entry's uncompressed bytes, CRC-checked. Errors: "CRC-32 mismatch:
  /// archive records 1a2b3c4d, data has 5e6f7a8b", "compression method 12 is
  /// not supported", "data (...) runs past the start of the central
  /// directory", ...
  StatusOr<std::vector<std::byte>> extract(const ZipEntry &entry) const;

  /// A stored entry's bytes where they lie in the archive, CRC-checked, so
  /// the caller can copy them once, straight to their destination.
  StatusOr<const std::byte *> storedData(const ZipEntry &entry) const;

private:
  ZipReader(const std::byte *data, size_t size) : data_(data), size_(size) {}
  Status readEndRecords(uint64_t &entryCount);
  Status readCentralDirectory(uint64_t entryCount);
  /// Checks the local header and returns where the entry's data starts.
  StatusOr<const std::byte *> locateData(const ZipEntry &entry) const;

  const std::byte *data_;
  size_t size_;
  uint64_t directoryOffset_ = 0;
  uint64_t directorySize_ = 0;
  std::vector<ZipEntry> entries_;
};

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_ZIPREADER_H
