//===- Checksum.cpp - CRC-32 of buffers and files -------------------------===//

#include "runtime/io/Checksum.h"

#include "runtime/io/ByteOrder.h"
#include "runtime/io/MappedFile.h" // errnoMessage

#include <cctype>
#include <cerrno>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace shardc::rt::io {

uint32_t crc32Update(uint32_t crc, const void *data, size_t size) {
  const Bytef *bytes = static_cast<const Bytef *>(data);
  // zlib's crc32 takes a uInt length; feed it pieces that fit.
  constexpr size_t kChunk = size_t(1) << 30;
  while (size > 0) {
    size_t chunk = size < kChunk ? size : kChunk;
    crc = static_cast<uint32_t>(::crc32(crc, bytes, static_cast<uInt>(chunk)));
    bytes += chunk;
    size -= chunk;
  }
  return crc;
}

uint32_t crc32Combine(uint32_t first, uint32_t second, size_t secondBytes) {
  return static_cast<uint32_t>(::crc32_combine(first, second, static_cast<z_off_t>(secondBytes)));
}

Crc32Joiner::Crc32Joiner(size_t secondBytes)
    : op_(::crc32_combine_gen(static_cast<z_off_t>(secondBytes))) {}

uint32_t Crc32Joiner::operator()(uint32_t first, uint32_t second) const {
  return static_cast<uint32_t>(::crc32_combine_op(first, second, op_));
}

std::string crc32Hex(uint32_t crc) { return hex32(crc); }

StatusOr<std::string> crc32File(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoMessage(errno));
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error(path + ": not a regular file");
  }

  std::vector<unsigned char> buffer(size_t(1) << 20);
  uint32_t crc = 0;
  for (;;) {
    ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR)
        continue;
      int error = errno;
      ::close(fd);
      return Status::error(path + ": read failed: " + errnoMessage(error));
    }
    if (got == 0)
      break;
    crc = crc32Update(crc, buffer.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return crc32Hex(crc);
}

Status verifyCrc32File(const std::string &path, const std::string &expectedHex) {
  StatusOr<std::string> actual = crc32File(path);
  if (!actual)
    return actual.status();
  return matchCrc32(path, expectedHex, *actual);
}

Status matchCrc32(const std::string &path, const std::string &expectedHex,
                  const std::string &actualHex) {
  std::string expected = expectedHex;
  bool wellFormed = expected.size() == 8;
  for (char &c : expected) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    wellFormed = wellFormed && std::isxdigit(static_cast<unsigned char>(c));
  }
  if (!wellFormed)
    return Status::error(path + ": expected checksum '" + expectedHex + "' is not 8 hex digits");
  if (actualHex != expected)
    return Status::error(path + ": checksum mismatch: expected " + expected + ", file has " +
                         actualHex);
  return {};
}

} // namespace shardc::rt::io
