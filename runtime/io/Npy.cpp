//===- Npy.cpp - numpy .npy files -----------------------------------------===//

#include "runtime/io/Npy.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/ByteOrder.h"
#include "runtime/io/MappedFile.h"
#include "runtime/io/NpyDtype.h"
#include "runtime/io/NpyHeader.h"
#include "runtime/io/TensorBytes.h"

#include <cstring>
#include <string_view>

namespace shardc::rt::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// numpy aligns the data to 64 bytes so it can be memory-mapped for SIMD use.
constexpr size_t kDataAlignment = 64;

/// Where the data of a .npy image is and what it holds.
struct NpyLayout {
  DType dtype;
  Shape shape;
  size_t dataOffset;
  size_t dataBytes;
};

Expected<NpyLayout> parseLayout(const std::byte *data, size_t size) {
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0)
    return fail("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned>(data[6]);
  unsigned minor = static_cast<unsigned>(data[7]);
  // 1.0 has a 16-bit header length; 2.0 a 32-bit one; 3.0 is 2.0 with a
  // UTF-8 instead of latin-1 header, which only matters for structured field
  // names, which we reject anyway.
  size_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0 || minor != 0)
    return fail("unsupported .npy format version " + std::to_string(major) + "." +
                std::to_string(minor));
  size_t headerStart = kMagicSize + 2 + lengthBytes;
  if (size < headerStart)
    return fail("truncated .npy header");
  uint64_t headerLength = lengthBytes == 2 ? loadLE16(data + 8) : loadLE32(data + 8);
  if (!inRange(headerStart, headerLength, size))
    return fail("npy header length " + std::to_string(headerLength) +
                " runs past the end of the data (" + std::to_string(size) + " bytes)");

  std::string_view text(reinterpret_cast<const char *>(data + headerStart), headerLength);
  Expected<NpyHeaderDict> dict = parseNpyHeaderDict(text);
  if (!dict)
    return dict.takeError();
  Expected<DType> dtype = dtypeFromNpyDescr(dict->descr);
  if (!dtype)
    return dtype.takeError();

  // Fortran and C order only differ when two or more dims exceed 1.
  if (dict->fortranOrder) {
    int bigDims = 0;
    for (int64_t dim : dict->shape)
      bigDims += dim > 1;
    if (bigDims > 1)
      return fail("fortran_order arrays are not supported (shape " +
                  formatShape(dict->shape) + "); save with np.ascontiguousarray");
  }

  std::optional<uint64_t> bytes = checkedByteCount(*dtype, dict->shape);
  if (!bytes)
    return fail("shape " + formatShape(dict->shape) + " is too large");
  size_t dataOffset = headerStart + headerLength;
  size_t available = size - dataOffset;
  if (available < *bytes)
    return fail("truncated: " + std::string(dtypeName(*dtype)) + " " +
                formatShape(dict->shape) + " needs " + std::to_string(*bytes) +
                " data bytes, found " + std::to_string(available));
  if (available > *bytes)
    return fail(std::to_string(available - *bytes) + " unexpected bytes after the " +
                std::to_string(*bytes) + " data bytes of " + dtypeName(*dtype) + " " +
                formatShape(dict->shape));
  return NpyLayout{*dtype, std::move(dict->shape), dataOffset, static_cast<size_t>(*bytes)};
}

} // namespace

Expected<HostTensor> decodeNpy(const std::byte *data, size_t size) {
  Expected<NpyLayout> layout = parseLayout(data, size);
  if (!layout)
    return layout.takeError();
  HostTensor tensor(layout->dtype, std::move(layout->shape));
  if (layout->dataBytes)
    std::memcpy(tensor.bytes.data(), data + layout->dataOffset, layout->dataBytes);
  return tensor;
}

Expected<HostTensor> decodeNpy(std::vector<std::byte> &&image) {
  Expected<NpyLayout> layout = parseLayout(image.data(), image.size());
  if (!layout)
    return layout.takeError();
  HostTensor tensor;
  tensor.dtype = layout->dtype;
  tensor.shape = std::move(layout->shape);
  // Shifting the data down over the header costs a memmove but no second
  // buffer: the peak stays at one copy of the entry.
  image.erase(image.begin(), image.begin() + static_cast<ptrdiff_t>(layout->dataOffset));
  tensor.bytes = std::move(image);
  return tensor;
}

Expected<std::string> encodeNpyHeader(DType dtype, const Shape &shape) {
  if (!checkedByteCount(dtype, shape))
    return fail("cannot write shape " + formatShape(shape) + ": negative or too large");
  std::string dict = formatNpyHeaderDict({npyDescr(dtype), false, shape});
  // Version 1.0 when the padded dict fits its 16-bit length, as numpy does.
  for (unsigned major : {1u, 2u}) {
    size_t preamble = kMagicSize + 2 + (major == 1 ? 2 : 4);
    size_t total = alignUp(preamble + dict.size() + 1, kDataAlignment);
    size_t headerLength = total - preamble;
    if (major == 1 && headerLength > 0xffff)
      continue;
    std::string out(kMagic, kMagicSize);
    out.push_back(static_cast<char>(major));
    out.push_back('\0');
    appendLE(out, headerLength, major == 1 ? 2 : 4);
    out += dict;
    out.append(headerLength - dict.size() - 1, ' ');
    out.push_back('\n');
    return out;
  }
  return fail("npy header of " + std::to_string(dict.size()) + " bytes is too long");
}

Expected<HostTensor> readNpy(const std::string &path) {
  return catchExceptions(path, [&]() -> Expected<HostTensor> {
    Expected<MappedFile> file = MappedFile::open(path);
    if (!file)
      return file.takeError();
    Expected<HostTensor> tensor = decodeNpy(file->data(), file->size());
    if (!tensor)
      return fail(path + ": " + tensor.error());
    return tensor;
  });
}

Status writeNpy(const std::string &path, const TensorView &tensor) {
  return catchExceptions(path, [&]() -> Status {
    Expected<std::string> header = encodeNpyHeader(tensor.dtype, tensor.shape);
    if (!header)
      return fail(path + ": " + header.error());
    size_t bytes = tensor.bytes(); // checked by encodeNpyHeader
    if (bytes != 0 && tensor.data == nullptr)
      return fail(path + ": tensor has no data");
    Expected<AtomicFile> file = AtomicFile::create(path);
    if (!file)
      return file.takeError();
    if (Status status = file->write(*header); !status)
      return status;
    if (Status status = file->write(tensor.data, bytes); !status)
      return status;
    return file->commit();
  });
}

Status writeNpy(const std::string &path, const HostTensor &tensor) {
  return catchExceptions(path, [&]() -> Status {
    Expected<TensorView> view = viewOf(tensor);
    if (!view)
      return fail(path + ": " + view.error());
    return writeNpy(path, *view);
  });
}

} // namespace shardc::rt::io
