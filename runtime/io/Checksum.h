//===- Checksum.h - CRC-32 of buffers and files ---------------------------===//
//
// The artifact manifest records a CRC-32 per file and the loader compares it
// before trusting a weight shard: it catches truncated copies and bit rot
// cheaply (zlib's crc32 runs at several GB/s), which is all it is for; it is
// not a defence against deliberate tampering. The checksum is the zip/PNG
// CRC-32 (zlib's crc32, polynomial 0xEDB88320), so `crc32` tools and Python's
// zlib.crc32 agree with it, written as 8 lowercase hex digits.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_CHECKSUM_H
#define SHARDC_RUNTIME_IO_CHECKSUM_H

#include "runtime/io/ErrorText.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace shardc::rt::io {

/// Continues a CRC-32 over more bytes: start with crc = 0, feed the pieces in
/// order. Any size (zlib's own interface takes 32-bit lengths).
uint32_t crc32Update(uint32_t crc, const void *data, size_t size);

/// The CRC-32 of A then B, from crc32(A), crc32(B) and B's length (zlib's
/// crc32_combine): pieces checked apart, in any order, joined after.
uint32_t crc32Combine(uint32_t first, uint32_t second, size_t secondBytes);

/// crc32Combine for many pieces of one length, its operator made once
/// (zlib's crc32_combine_gen and _op: a multiply, not a log-time search).
class Crc32Joiner {
public:
  explicit Crc32Joiner(size_t secondBytes);
  uint32_t operator()(uint32_t first, uint32_t second) const;

private:
  unsigned long op_;
};

/// "0a1b2c3d".
std::string crc32Hex(uint32_t crc);

/// The CRC-32 of a file's contents, read in 1 MiB chunks (so any size, in
/// constant memory), as 8 lowercase hex digits.
StatusOr<std::string> crc32File(const std::string &path);

/// Fails unless the file's CRC-32 is `expectedHex` (case-insensitive):
/// "x: checksum mismatch: expected 0a1b2c3d, file has 5e6f7a8b".
Status verifyCrc32File(const std::string &path, const std::string &expectedHex);

/// The same check of a CRC-32 already taken (`actualHex`, crc32Hex's form)
/// over the bytes read from `path`: a copy's (FileCopy::crc32), so that
/// what is checked is what is kept.
Status matchCrc32(const std::string &path, const std::string &expectedHex,
                  const std::string &actualHex);

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_CHECKSUM_H
