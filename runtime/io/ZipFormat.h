//===- ZipFormat.h - Record layouts of the zip format ---------------------===//
//
// The subset of PKWARE's APPNOTE.TXT that .npz files use: local file headers,
// the central directory, the end-of-central-directory record and the zip64
// records that replace its 16- and 32-bit fields when an archive or an entry
// passes 4 GiB or 65535 entries. Offsets are byte offsets within each record.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_ZIPFORMAT_H
#define SHARDC_RUNTIME_IO_ZIPFORMAT_H

#include <cstdint>

namespace shardc::rt::io::zip {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;

constexpr uint64_t kLocalHeaderSize = 30;   // + name + extra
constexpr uint64_t kCentralHeaderSize = 46; // + name + extra + comment
constexpr uint64_t kEndSize = 22;           // + comment
constexpr uint64_t kZip64EndSize = 56;      // fixed part, + extensible data
constexpr uint64_t kZip64LocatorSize = 20;
constexpr uint64_t kMaxCommentSize = 0xffff;

/// Extra-field id of the zip64 extended information (64-bit sizes/offset).
constexpr uint16_t kZip64ExtraId = 0x0001;
/// A 32-bit field with this value lives in the zip64 extra field instead.
constexpr uint32_t kZip64Marker32 = 0xffffffff;
constexpr uint16_t kZip64Marker16 = 0xffff;

constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;

constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagDataDescriptor = 1 << 3;
constexpr uint16_t kFlagStrongEncryption = 1 << 6;
constexpr uint16_t kFlagUtf8Name = 1 << 11;

/// "version needed to extract": 2.0 for stored/deflate, 4.5 with zip64.
constexpr uint16_t kVersionDefault = 20;
constexpr uint16_t kVersionZip64 = 45;

// Local file header.
namespace local {
constexpr int kFlags = 6, kMethod = 8, kTime = 10, kDate = 12, kCrc = 14,
              kCompressedSize = 18, kUncompressedSize = 22, kNameLength = 26,
              kExtraLength = 28;
} // namespace local

// Central directory file header.
namespace central {
constexpr int kVersionMadeBy = 4, kVersionNeeded = 6, kFlags = 8, kMethod = 10,
              kTime = 12, kDate = 14, kCrc = 16, kCompressedSize = 20,
              kUncompressedSize = 24, kNameLength = 28, kExtraLength = 30,
              kCommentLength = 32, kDiskStart = 34, kInternalAttributes = 36,
              kExternalAttributes = 38, kLocalHeaderOffset = 42;
} // namespace central

// End of central directory record.
namespace end {
constexpr int kDisk = 4, kDirectoryDisk = 6, kEntriesOnDisk = 8, kEntries = 10,
              kDirectorySize = 12, kDirectoryOffset = 16, kCommentLength = 20;
} // namespace end

// Zip64 end of central directory record.
namespace end64 {
constexpr int kRecordSize = 4, kVersionMadeBy = 12, kVersionNeeded = 14, kDisk = 16,
              kDirectoryDisk = 20, kEntriesOnDisk = 24, kEntries = 32,
              kDirectorySize = 40, kDirectoryOffset = 48;
} // namespace end64

// Zip64 end of central directory locator.
namespace locator {
constexpr int kDisk = 4, kEndOffset = 8, kTotalDisks = 16;
} // namespace locator

} // namespace shardc::rt::io::zip

#endif // SHARDC_RUNTIME_IO_ZIPFORMAT_H
