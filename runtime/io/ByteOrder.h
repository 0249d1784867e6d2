//===- ByteOrder.h - Little-endian fields and bounds checks ---------------===//
//
// The zip, npy and safetensors formats all store their integers little-endian
// at offsets that come from the file itself. These helpers read and write
// such fields through memcpy (no unaligned or type-punned loads) and check a
// [offset, offset + length) range against a buffer without the overflow that
// `offset + length <= size` has when both come from a hostile file.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_RUNTIME_IO_BYTEORDER_H
#define SHARDC_RUNTIME_IO_BYTEORDER_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

// The formats are little-endian and the runtime hands their bytes out as
// tensors without swapping, so a big-endian host would read garbage.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "runtime/io assumes a little-endian host");
static_assert(sizeof(size_t) == 8, "runtime/io assumes a 64-bit host");

namespace shardc::rt::io {

/// Whether [offset, offset + length) lies within a buffer of `size` bytes.
inline bool inRange(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

inline uint16_t loadLE16(const std::byte *p) {
  uint8_t b[2];
  std::memcpy(b, p, 2);
  return static_cast<uint16_t>(b[0] | (b[1] << 8));
}

inline uint32_t loadLE32(const std::byte *p) {
  uint8_t b[4];
  std::memcpy(b, p, 4);
  return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}

inline uint64_t loadLE64(const std::byte *p) {
  return uint64_t(loadLE32(p)) | uint64_t(loadLE32(p + 4)) << 32;
}

/// Appends `value` as `width` little-endian bytes.
inline void appendLE(std::string &out, uint64_t value, int width) {
  for (int i = 0; i < width; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// Eight lowercase hex digits, the form manifests and messages use for CRCs.
inline std::string hex32(uint32_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text(8, '0');
  for (int i = 7; i >= 0; --i, value >>= 4)
    text[i] = kDigits[value & 0xf];
  return text;
}

} // namespace shardc::rt::io

#endif // SHARDC_RUNTIME_IO_BYTEORDER_H
