//===- ZipWriter.cpp - Stored (uncompressed) zip archives, streamed -------===//

#include "runtime/io/ZipWriter.h"

#include "runtime/io/ByteOrder.h"
#include "runtime/io/Checksum.h"
#include "runtime/io/ZipFormat.h"

namespace shardc::rt::io {

using namespace zip;

namespace {
/// MS-DOS date of 1980-01-01 (day 1, month 1, year 0 = 1980); time 00:00.
constexpr uint16_t kDosDate = (1 << 5) | 1;
constexpr uint16_t kDosTime = 0;
/// "made by" Unix (3) so unzip applies the external attributes as a mode.
constexpr uint16_t kMadeByUnix = 3 << 8;
/// A regular file, rw-r--r--, in the high half of the external attributes.
constexpr uint32_t kExternalAttributes = 0100644u << 16;

/// Non-ASCII names are flagged as UTF-8; otherwise readers assume CP437.
uint16_t nameFlags(const std::string &name) {
  for (char c : name)
    if (static_cast<unsigned char>(c) >= 0x80)
      return kFlagUtf8Name;
  return 0;
}
} // namespace

Status ZipWriter::addStored(const std::string &name, const std::vector<ByteSpan> &pieces) {
  if (name.empty() || name.size() > 0xffff)
    return Status::error(file_.path() + ": zip entry name must be 1 to 65535 bytes");

  // The CRC and size go in the local header, before the data: compute them
  // first rather than seeking back or writing a data descriptor.
  uint32_t crc = 0;
  uint64_t size = 0;
  for (const ByteSpan &piece : pieces) {
    crc = crc32Update(crc, piece.data, piece.size);
    size += piece.size;
  }
  uint64_t offset = file_.offset();
  bool zip64 = forceZip64_ || size >= kZip64Marker32;

  std::string header;
  appendLE(header, kLocalHeaderSignature, 4);
  appendLE(header, zip64 ? kVersionZip64 : kVersionDefault, 2);
  appendLE(header, nameFlags(name), 2);
  appendLE(header, kMethodStored, 2);
  appendLE(header, kDosTime, 2);
  appendLE(header, kDosDate, 2);
  appendLE(header, crc, 4);
  appendLE(header, zip64 ? kZip64Marker32 : size, 4); // compressed
  appendLE(header, zip64 ? kZip64Marker32 : size, 4); // uncompressed
  appendLE(header, name.size(), 2);
  appendLE(header, zip64 ? 20 : 0, 2);
  header += name;
  if (zip64) {
    // In a local header the zip64 field holds both sizes, always.
    appendLE(header, kZip64ExtraId, 2);
    appendLE(header, 16, 2);
    appendLE(header, size, 8);
    appendLE(header, size, 8);
  }
  if (Status status = file_.write(header); !status)
    return status;
  for (const ByteSpan &piece : pieces)
    if (Status status = file_.write(piece.data, piece.size); !status)
      return status;

  records_.push_back({name, crc, size, offset});
  return {};
}

Status ZipWriter::finish() {
  uint64_t directoryOffset = file_.offset();
  std::string directory;
  for (const CentralRecord &record : records_) {
    // Saturate exactly the fields that do not fit (all of them when forced)
    // and list those, in order, in the zip64 extra field.
    bool bigSize = forceZip64_ || record.size >= kZip64Marker32;
    bool bigOffset = forceZip64_ || record.localHeaderOffset >= kZip64Marker32;
    std::string extra;
    if (bigSize || bigOffset) {
      appendLE(extra, kZip64ExtraId, 2);
      appendLE(extra, (bigSize ? 16 : 0) + (bigOffset ? 8 : 0), 2);
      if (bigSize) {
        appendLE(extra, record.size, 8); // uncompressed
        appendLE(extra, record.size, 8); // compressed
      }
      if (bigOffset)
        appendLE(extra, record.localHeaderOffset, 8);
    }
    uint16_t version = extra.empty() ? kVersionDefault : kVersionZip64;
    appendLE(directory, kCentralHeaderSignature, 4);
    appendLE(directory, kMadeByUnix | version, 2);
    appendLE(directory, version, 2);
    appendLE(directory, nameFlags(record.name), 2);
    appendLE(directory, kMethodStored, 2);
    appendLE(directory, kDosTime, 2);
    appendLE(directory, kDosDate, 2);
    appendLE(directory, record.crc32, 4);
    appendLE(directory, bigSize ? kZip64Marker32 : record.size, 4);
    appendLE(directory, bigSize ? kZip64Marker32 : record.size, 4);
    appendLE(directory, record.name.size(), 2);
    appendLE(directory, extra.size(), 2);
    appendLE(directory, 0, 2); // comment length
    appendLE(directory, 0, 2); // disk number start
    appendLE(directory, 0, 2); // internal attributes
    appendLE(directory, kExternalAttributes, 4);
    appendLE(directory, bigOffset ? kZip64Marker32 : record.localHeaderOffset, 4);
    directory += record.name;
    directory += extra;
  }
  uint64_t directorySize = directory.size();
  uint64_t entries = records_.size();

  std::string end;
  bool zip64 = forceZip64_ || entries >= kZip64Marker16 || directorySize >= kZip64Marker32 ||
               directoryOffset >= kZip64Marker32;
  if (zip64) {
    uint64_t end64Offset = directoryOffset + directorySize;
    appendLE(end, kZip64EndSignature, 4);
    appendLE(end, kZip64EndSize - 12, 8); // size of the rest of the record
    appendLE(end, kMadeByUnix | kVersionZip64, 2);
    appendLE(end, kVersionZip64, 2);
    appendLE(end, 0, 4); // this disk
    appendLE(end, 0, 4); // disk with the central directory
    appendLE(end, entries, 8);
    appendLE(end, entries, 8);
    appendLE(end, directorySize, 8);
    appendLE(end, directoryOffset, 8);

    appendLE(end, kZip64LocatorSignature, 4);
    appendLE(end, 0, 4); // disk with the zip64 end record
    appendLE(end, end64Offset, 8);
    appendLE(end, 1, 4); // total disks
  }
  appendLE(end, kEndSignature, 4);
  appendLE(end, 0, 2); // this disk
  appendLE(end, 0, 2); // disk with the central directory
  uint64_t entries16 = zip64 ? kZip64Marker16 : entries;
  appendLE(end, entries16, 2);
  appendLE(end, entries16, 2);
  appendLE(end, zip64 ? kZip64Marker32 : directorySize, 4);
  appendLE(end, zip64 ? kZip64Marker32 : directoryOffset, 4);
  appendLE(end, 0, 2); // comment length

  if (Status status = file_.write(directory); !status)
    return status;
  return file_.write(end);
}

} // namespace shardc::rt::io
