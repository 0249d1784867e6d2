//===- SafeTensorsWriter.cpp - Lay out and write a safetensors file -------===//

#include "runtime/io/SafeTensors.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/ByteOrder.h"
#include "runtime/io/SafeTensorsHeader.h"
#include "runtime/io/TensorBytes.h"

#include <algorithm>
#include <set>

namespace shardc::rt::io {

namespace {
constexpr uint64_t kLengthFieldSize = 8;
/// The format pads its header to a multiple of 8 whatever the alignment.
constexpr uint64_t kHeaderAlignment = 8;
constexpr uint64_t kMaxAlignment = 4096;
/// Far beyond any disk, and low enough that alignUp cannot overflow.
constexpr uint64_t kMaxTotalBytes = uint64_t(1) << 62;
} // namespace

Status writeSafeTensors(const std::string &path, const std::vector<NamedView> &tensors,
                        const SafeTensorsMetadata &metadata, SafeTensorsWriteOptions options) {
  return catchExceptions(path, [&]() -> Status {
    const uint64_t alignment = options.alignment;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
      return Status::error(path + ": alignment " + std::to_string(alignment) +
                           " is not a power of two up to " + std::to_string(kMaxAlignment));
    // Lay out and validate everything before creating the file.
    SafeTensorsHeader header;
    header.metadata = metadata;
    std::set<std::string_view> seen;
    uint64_t cursor = 0;
    for (const NamedView &tensor : tensors) {
      std::string where = path + ": tensor '" + printable(tensor.name) + "': ";
      if (tensor.name.empty())
        return Status::error(path + ": a tensor has an empty name");
      if (tensor.name == "__metadata__")
        return Status::error(where + "the name is reserved for metadata");
      if (!seen.insert(tensor.name).second)
        return Status::error(where + "appears twice");
      std::optional<uint64_t> bytes = checkedByteCount(tensor.view.dtype, tensor.view.shape);
      if (!bytes)
        return Status::error(where + "invalid shape " + formatShape(tensor.view.shape));
      if (*bytes != 0 && tensor.view.data == nullptr)
        return Status::error(where + "tensor has no data");
      uint64_t begin = alignUp(cursor, alignment);
      if (*bytes > kMaxTotalBytes - begin)
        return Status::error(where + "the file would exceed 2^62 bytes");
      cursor = begin + *bytes;
      header.tensors.push_back({tensor.name, tensor.view.dtype, tensor.view.shape, begin, cursor});
    }
    StatusOr<std::string> json = formatSafeTensorsHeader(header);
    if (!json)
      return Status::error(path + ": " + json.message());
    // Spaces (valid JSON whitespace) until the data buffer starts at a
    // multiple of the alignment, and of 8 as the format asks.
    uint64_t headerAlignment = std::max(alignment, kHeaderAlignment);
    json->append(alignUp(kLengthFieldSize + json->size(), headerAlignment) - kLengthFieldSize -
                     json->size(),
                 ' ');

    StatusOr<AtomicFile> file = AtomicFile::create(path);
    if (!file)
      return file.status();
    std::string lengthField;
    appendLE(lengthField, json->size(), 8);
    if (Status status = file->write(lengthField); !status)
      return status;
    if (Status status = file->write(*json); !status)
      return status;
    const uint64_t dataOffset = file->offset();
    for (size_t i = 0; i < tensors.size(); ++i) {
      const SafeTensorsRecord &record = header.tensors[i];
      if (Status status = file->writeZeros(record.begin - (file->offset() - dataOffset)); !status)
        return status;
      if (Status status = file->write(tensors[i].view.data, record.end - record.begin); !status)
        return status;
    }
    return file->commit();
  });
}

Status writeSafeTensors(const std::string &path, const std::vector<NamedTensor> &tensors,
                        const SafeTensorsMetadata &metadata, SafeTensorsWriteOptions options) {
  return catchExceptions(path, [&]() -> Status {
    std::vector<NamedView> views;
    views.reserve(tensors.size());
    for (const NamedTensor &tensor : tensors) {
      StatusOr<TensorView> view = viewOf(tensor.tensor);
      if (!view)
        return Status::error(path + ": tensor '" + printable(tensor.name) + "': " + view.message());
      views.push_back({tensor.name, std::move(*view)});
    }
    return writeSafeTensors(path, views, metadata, options);
  });
}

} // namespace shardc::rt::io
