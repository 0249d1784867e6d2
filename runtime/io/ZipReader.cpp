//===- ZipReader.cpp - Entries of a zip archive held in memory ------------===//

#include "runtime/io/ZipReader.h"

#include "runtime/io/ByteOrder.h"
#include "runtime/io/Checksum.h"
#include "runtime/io/Inflate.h"
#include "runtime/io/ZipFormat.h"

#include <optional>

namespace shardc::rt::io {

using namespace zip;

namespace {
/// Deflate cannot compress better than 1032:1 (a match covers at most 258
/// bytes and costs at least 2 bits). A recorded size beyond that is a lie
/// meant to make us allocate; refusing it bounds memory by the archive's size.
constexpr uint64_t kMaxDeflateRatio = 1032;
} // namespace

StatusOr<ZipReader> ZipReader::open(const std::byte *data, size_t size) {
  ZipReader reader(data, size);
  uint64_t entryCount = 0;
  if (Status status = reader.readEndRecords(entryCount); !status)
    return status;
  if (Status status = reader.readCentralDirectory(entryCount); !status)
    return status;
  return reader;
}

Status ZipReader::readEndRecords(uint64_t &entryCount) {
  if (size_ < kEndSize)
    return Status::error("not a zip archive (" + std::to_string(size_) + " bytes)");

  // The end record is the last thing in the file, followed only by its own
  // comment of up to 64 KiB: search backwards for a signature whose comment
  // length ends exactly at the end of the file.
  uint64_t lowest = size_ - kEndSize > kMaxCommentSize ? size_ - kEndSize - kMaxCommentSize : 0;
  std::optional<uint64_t> endPos;
  for (uint64_t pos = size_ - kEndSize;; --pos) {
    const std::byte *p = data_ + pos;
    if (loadLE32(p) == kEndSignature &&
        pos + kEndSize + loadLE16(p + end::kCommentLength) == size_) {
      endPos = pos;
      break;
    }
    if (pos == lowest)
      break;
  }
  if (!endPos)
    return Status::error("not a zip archive (no end of central directory record)");

  const std::byte *record = data_ + *endPos;
  uint64_t disk = loadLE16(record + end::kDisk);
  uint64_t directoryDisk = loadLE16(record + end::kDirectoryDisk);
  uint64_t entriesOnDisk = loadLE16(record + end::kEntriesOnDisk);
  entryCount = loadLE16(record + end::kEntries);
  directorySize_ = loadLE32(record + end::kDirectorySize);
  directoryOffset_ = loadLE32(record + end::kDirectoryOffset);
  uint64_t directoryEnd = *endPos;

  // A zip64 locator right before the end record points at the zip64 end
  // record, whose 64-bit fields replace the saturated 16/32-bit ones.
  bool saturated = entriesOnDisk == kZip64Marker16 || entryCount == kZip64Marker16 ||
                   directorySize_ == kZip64Marker32 || directoryOffset_ == kZip64Marker32;
  if (*endPos >= kZip64LocatorSize &&
      loadLE32(data_ + *endPos - kZip64LocatorSize) == kZip64LocatorSignature) {
    const std::byte *locatorRecord = data_ + *endPos - kZip64LocatorSize;
    if (loadLE32(locatorRecord + locator::kDisk) != 0 ||
        loadLE32(locatorRecord + locator::kTotalDisks) > 1)
      return Status::error("multi-disk zip archives are not supported");
    uint64_t end64Pos = loadLE64(locatorRecord + locator::kEndOffset);
    if (!inRange(end64Pos, kZip64EndSize, *endPos - kZip64LocatorSize))
      return Status::error("zip64 end record offset " + std::to_string(end64Pos) +
                           " is out of range");
    const std::byte *end64Record = data_ + end64Pos;
    if (loadLE32(end64Record) != kZip64EndSignature)
      return Status::error("bad zip64 end record signature");
    disk = loadLE32(end64Record + end64::kDisk);
    directoryDisk = loadLE32(end64Record + end64::kDirectoryDisk);
    entriesOnDisk = loadLE64(end64Record + end64::kEntriesOnDisk);
    entryCount = loadLE64(end64Record + end64::kEntries);
    directorySize_ = loadLE64(end64Record + end64::kDirectorySize);
    directoryOffset_ = loadLE64(end64Record + end64::kDirectoryOffset);
    directoryEnd = end64Pos;
  } else if (saturated) {
    return Status::error("truncated zip64 archive (no zip64 end record locator)");
  }

  if (disk != 0 || directoryDisk != 0 || entriesOnDisk != entryCount)
    return Status::error("multi-disk zip archives are not supported");
  if (!inRange(directoryOffset_, directorySize_, directoryEnd))
    return Status::error("central directory (offset " + std::to_string(directoryOffset_) + ", " +
                         std::to_string(directorySize_) + " bytes) lies outside the archive");
  // Checked before anything is reserved, so a hostile count cannot make us
  // allocate more than the directory could describe.
  if (entryCount > directorySize_ / kCentralHeaderSize)
    return Status::error("central directory of " + std::to_string(directorySize_) +
                         " bytes cannot hold " + std::to_string(entryCount) + " entries");
  return {};
}

Status ZipReader::readCentralDirectory(uint64_t entryCount) {
  const uint64_t directoryEnd = directoryOffset_ + directorySize_;
  uint64_t pos = directoryOffset_;
  entries_.reserve(entryCount);
  for (uint64_t index = 0; index < entryCount; ++index) {
    if (!inRange(pos, kCentralHeaderSize, directoryEnd))
      return Status::error("truncated central directory");
    const std::byte *p = data_ + pos;
    if (loadLE32(p) != kCentralHeaderSignature)
      return Status::error("bad central directory record at offset " + std::to_string(pos));
    uint64_t nameLength = loadLE16(p + central::kNameLength);
    uint64_t extraLength = loadLE16(p + central::kExtraLength);
    uint64_t commentLength = loadLE16(p + central::kCommentLength);
    if (!inRange(pos + kCentralHeaderSize, nameLength + extraLength + commentLength, directoryEnd))
      return Status::error("truncated central directory");

    ZipEntry entry;
    entry.name.assign(reinterpret_cast<const char *>(p + kCentralHeaderSize), nameLength);
    entry.flags = loadLE16(p + central::kFlags);
    entry.method = loadLE16(p + central::kMethod);
    entry.crc32 = loadLE32(p + central::kCrc);
    entry.uncompressedSize = loadLE32(p + central::kUncompressedSize);
    entry.compressedSize = loadLE32(p + central::kCompressedSize);
    entry.localHeaderOffset = loadLE32(p + central::kLocalHeaderOffset);
    uint64_t diskStart = loadLE16(p + central::kDiskStart);

    // The zip64 extra field holds, in this order, exactly those of the four
    // fields that were saturated in the fixed record.
    bool needUncompressed = entry.uncompressedSize == kZip64Marker32;
    bool needCompressed = entry.compressedSize == kZip64Marker32;
    bool needOffset = entry.localHeaderOffset == kZip64Marker32;
    bool needDisk = diskStart == kZip64Marker16;
    const std::byte *extra = p + kCentralHeaderSize + nameLength;
    for (uint64_t at = 0; at + 4 <= extraLength;) {
      uint64_t id = loadLE16(extra + at);
      uint64_t length = loadLE16(extra + at + 2);
      if (!inRange(at + 4, length, extraLength))
        return Status::error("entry '" + printable(entry.name) + "': malformed extra field");
      if (id == kZip64ExtraId) {
        const std::byte *field = extra + at + 4;
        uint64_t left = length;
        auto take = [&](bool needed, uint64_t &value, uint64_t width) {
          if (!needed)
            return true;
          if (left < width)
            return false;
          value = width == 8 ? loadLE64(field) : loadLE32(field);
          field += width;
          left -= width;
          return true;
        };
        if (!take(needUncompressed, entry.uncompressedSize, 8) ||
            !take(needCompressed, entry.compressedSize, 8) ||
            !take(needOffset, entry.localHeaderOffset, 8) || !take(needDisk, diskStart, 4))
          return Status::error("entry '" + printable(entry.name) +
                               "': zip64 extra field is too short");
        needUncompressed = needCompressed = needOffset = needDisk = false;
      }
      at += 4 + length;
    }
    if (needUncompressed || needCompressed || needOffset || needDisk)
      return Status::error("entry '" + printable(entry.name) + "': zip64 extra field is missing");
    if (diskStart != 0)
      return Status::error("multi-disk zip archives are not supported");

    entries_.push_back(std::move(entry));
    pos += kCentralHeaderSize + nameLength + extraLength + commentLength;
  }
  return {};
}

StatusOr<const std::byte *> ZipReader::locateData(const ZipEntry &entry) const {
  if (entry.flags & (kFlagEncrypted | kFlagStrongEncryption))
    return Status::error("encrypted entries are not supported");
  if (entry.method != kMethodStored && entry.method != kMethodDeflate)
    return Status::error("compression method " + std::to_string(entry.method) +
                         " is not supported (only stored and deflate)");

  // Entry data precedes the central directory; anything else overlaps it.
  if (!inRange(entry.localHeaderOffset, kLocalHeaderSize, directoryOffset_))
    return Status::error("local header offset " + std::to_string(entry.localHeaderOffset) +
                         " is out of range");
  const std::byte *header = data_ + entry.localHeaderOffset;
  if (loadLE32(header) != kLocalHeaderSignature)
    return Status::error("bad local header signature at offset " +
                         std::to_string(entry.localHeaderOffset));
  uint64_t nameLength = loadLE16(header + local::kNameLength);
  uint64_t extraLength = loadLE16(header + local::kExtraLength);
  uint64_t dataStart = entry.localHeaderOffset + kLocalHeaderSize + nameLength + extraLength;
  if (dataStart > directoryOffset_)
    return Status::error("local header runs into the central directory");
  std::string_view localName(reinterpret_cast<const char *>(header + kLocalHeaderSize), nameLength);
  if (localName != entry.name)
    return Status::error("local header names '" + printable(localName) +
                         "', the central directory '" + printable(entry.name) + "'");
  if (!inRange(dataStart, entry.compressedSize, directoryOffset_))
    return Status::error("data (" + std::to_string(entry.compressedSize) + " bytes at offset " +
                         std::to_string(dataStart) +
                         ") runs past the start of the central directory");
  return data_ + dataStart;
}

namespace {
Status checkCrc(const ZipEntry &entry, const std::byte *data, size_t size) {
  uint32_t crc = crc32Update(0, data, size);
  if (crc != entry.crc32)
    return Status::error("CRC-32 mismatch: archive records " + hex32(entry.crc32) + ", data has " +
                         hex32(crc));
  return {};
}
} // namespace

StatusOr<const std::byte *> ZipReader::storedData(const ZipEntry &entry) const {
  StatusOr<const std::byte *> data = locateData(entry);
  if (!data)
    return data;
  if (entry.method != kMethodStored)
    return Status::error("entry is compressed, not stored");
  if (entry.compressedSize != entry.uncompressedSize)
    return Status::error("stored entry has compressed size " +
                         std::to_string(entry.compressedSize) + " but uncompressed size " +
                         std::to_string(entry.uncompressedSize));
  if (Status status = checkCrc(entry, *data, entry.uncompressedSize); !status)
    return status;
  return data;
}

StatusOr<std::vector<std::byte>> ZipReader::extract(const ZipEntry &entry) const {
  if (entry.method == kMethodStored) {
    StatusOr<const std::byte *> data = storedData(entry);
    if (!data)
      return data.status();
    return std::vector<std::byte>(*data, *data + entry.uncompressedSize);
  }
  StatusOr<const std::byte *> compressed = locateData(entry);
  if (!compressed)
    return compressed.status();
  if (entry.uncompressedSize / kMaxDeflateRatio > entry.compressedSize + 1)
    return Status::error("implausible uncompressed size " + std::to_string(entry.uncompressedSize) +
                         " for " + std::to_string(entry.compressedSize) + " compressed bytes");
  StatusOr<std::vector<std::byte>> bytes =
      inflateRaw(*compressed, entry.compressedSize, entry.uncompressedSize);
  if (!bytes)
    return bytes;
  if (Status status = checkCrc(entry, bytes->data(), bytes->size()); !status)
    return status;
  return bytes;
}

} // namespace shardc::rt::io
