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

StatusOr<NpyLayout> parseLayout(const std::byte *data, size_t size) {
  if (size < kMagicSize + 2 || std::memcmp(data, kMagic, kMagicSize) != 0)
    return Status::error("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned>(data[6]);
  unsigned minor = static_cast<unsigned>(data[7]);
  // 1.0 has a 16-bit header length; 2.0 a 32-bit one; 3.0 is 2.0 with a
  // UTF-8 instead of latin-1 header, which only matters for structured field
  // names, which we reject anyway.
  size_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0 || minor != 0)
    return Status::error("unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(minor));
  size_t headerStart = kMagicSize + 2 + lengthBytes;
  if (size < headerStart)
    return Status::error("truncated .npy header");
  uint64_t headerLength = lengthBytes == 2 ? loadLE16(data + 8) : loadLE32(data + 8);
  if (!inRange(headerStart, headerLength, size))
    return Status::error("npy header length " + std::to_string(headerLength) +
                         " runs past the end of the data (" + std::to_string(size) + " bytes)");

  std::string_view text(reinterpret_cast<const char *>(data + headerStart), headerLength);
  StatusOr<NpyHeaderDict> dict = parseNpyHeaderDict(text);
  if (!dict)
    return dict.status();
  StatusOr<DType> dtype = dtypeFromNpyDescr(dict->descr);
  if (!dtype)
    return dtype.status();

  // Fortran and C order only differ when two or more dims exceed 1.
  if (dict->fortranOrder) {
    int bigDims = 0;
    for (int64_t dim : dict->shape)
      bigDims += dim > 1;
    if (bigDims > 1)
      return Status::error("fortran_order arrays are not supported (shape " +
                           formatShape(dict->shape) + "); save with np.ascontiguousarray");
  }

  std::optional<uint64_t> bytes = checkedByteCount(*dtype, dict->shape);
  if (!bytes)
    return Status::error("shape " + formatShape(dict->shape) + " is too large");
  size_t dataOffset = headerStart + headerLength;
  size_t available = size - dataOffset;
  if (available < *bytes)
    return Status::error("truncated: " + std::string(dtypeName(*dtype)) + " " +
                         formatShape(dict->shape) + " needs " + std::to_string(*bytes) +
                         " data bytes, found " + std::to_string(available));
  if (available > *bytes)
    return Status::error(std::to_string(available - *bytes) + " unexpected bytes after the " +
                         std::to_string(*bytes) + " data bytes of " + dtypeName(*dtype) + " " +
                         formatShape(dict->shape));
  return NpyLayout{*dtype, std::move(dict->shape), dataOffset, static_cast<size_t>(*bytes)};
}

} // namespace

StatusOr<HostTensor> decodeNpy(const std::byte *data, size_t size) {
  StatusOr<NpyLayout> layout = parseLayout(data, size);
  if (!layout)
    return layout.status();
  HostTensor tensor(layout->dtype, std::move(layout->shape));
  if (layout->dataBytes)
    std::memcpy(tensor.bytes.data(), data + layout->dataOffset, layout->dataBytes);
  return tensor;
}

StatusOr<HostTensor> decodeNpy(std::vector<std::byte> &&image) {
  StatusOr<NpyLayout> layout = parseLayout(image.data(), image.size());
  if (!layout)
    return layout.status();
  HostTensor tensor;
  tensor.dtype = layout->dtype;
  tensor.shape = std::move(layout->shape);
  // Shifting the data down over the header costs a memmove but no second
  // buffer: the peak stays at one copy of the entry.
  image.erase(image.begin(), image.begin() + static_cast<ptrdiff_t>(layout->dataOffset));
  tensor.bytes = std::move(image);
  return tensor;
}

StatusOr<std::string> encodeNpyHeader(DType dtype, const Shape &shape) {
  if (!checkedByteCount(dtype, shape))
    return Status::error("cannot write shape " + formatShape(shape) + ": negative or too large");
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
  return Status::error("npy header of " + std::to_string(dict.size()) + " bytes is too long");
}

StatusOr<HostTensor> readNpy(const std::string &path) {
  return catchExceptions(path, [&]() -> StatusOr<HostTensor> {
    StatusOr<MappedFile> file = MappedFile::open(path);
    if (!file)
      return file.status();
    StatusOr<HostTensor> tensor = decodeNpy(file->data(), file->size());
    if (!tensor)
      return Status::error(path + ": " + tensor.message());
    return tensor;
  });
}

Status writeNpy(const std::string &path, const TensorView &tensor) {
  return catchExceptions(path, [&]() -> Status {
    StatusOr<std::string> header = encodeNpyHeader(tensor.dtype, tensor.shape);
    if (!header)
      return Status::error(path + ": " + header.message());
    size_t bytes = tensor.bytes(); // checked by encodeNpyHeader
    if (bytes != 0 && tensor.data == nullptr)
      return Status::error(path + ": tensor has no data");
    StatusOr<AtomicFile> file = AtomicFile::create(path);
    if (!file)
      return file.status();
    if (Status status = file->write(*header); !status)
      return status;
    if (Status status = file->write(tensor.data, bytes); !status)
      return status;
    return file->commit();
  });
}

Status writeNpy(const std::string &path, const HostTensor &tensor) {
  return catchExceptions(path, [&]() -> Status {
    StatusOr<TensorView> view = viewOf(tensor);
    if (!view)
      return Status::error(path + ": " + view.message());
    return writeNpy(path, *view);
  });
}

} // namespace shardc::rt::io
