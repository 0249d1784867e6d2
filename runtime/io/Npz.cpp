//===- Npz.cpp - numpy .npz archives --------------------------------------===//

#include "runtime/io/Npz.h"

#include "runtime/io/AtomicFile.h"
#include "runtime/io/MappedFile.h"
#include "runtime/io/Npy.h"
#include "runtime/io/TensorBytes.h"
#include "runtime/io/ZipFormat.h"
#include "runtime/io/ZipReader.h"
#include "runtime/io/ZipWriter.h"

#include <set>
#include <string_view>

namespace shardc::rt::io {

namespace {
constexpr std::string_view kSuffix = ".npy";

bool endsWithSuffix(const std::string &name) {
  return name.size() > kSuffix.size() &&
         std::string_view(name).substr(name.size() - kSuffix.size()) == kSuffix;
}
/// Stored entries are decoded straight from the mapping (one copy, into the
/// tensor); deflated ones are inflated into a buffer that becomes the tensor.
StatusOr<HostTensor> decodeEntry(const ZipReader &archive, const ZipEntry &entry) {
  if (entry.method == zip::kMethodStored) {
    StatusOr<const std::byte *> data = archive.storedData(entry);
    if (!data)
      return data.status();
    return decodeNpy(*data, entry.uncompressedSize);
  }
  StatusOr<std::vector<std::byte>> bytes = archive.extract(entry);
  if (!bytes)
    return bytes.status();
  return decodeNpy(std::move(*bytes));
}
} // namespace

StatusOr<std::vector<NamedTensor>> readNpz(const std::string &path) {
  return catchExceptions(path, [&]() -> StatusOr<std::vector<NamedTensor>> {
    StatusOr<MappedFile> file = MappedFile::open(path);
    if (!file)
      return file.status();
    StatusOr<ZipReader> archive = ZipReader::open(file->data(), file->size());
    if (!archive)
      return Status::error(path + ": " + archive.message());

    std::vector<NamedTensor> tensors;
    std::set<std::string> seen;
    for (const ZipEntry &entry : archive->entries()) {
      // np.load would hand back a non-.npy member as raw bytes; the runtime
      // has no use for those, and a stray file is more likely a mistake.
      if (!endsWithSuffix(entry.name))
        return Status::error(path + ": entry '" + printable(entry.name) + "' is not a .npy file");
      std::string key = entry.name.substr(0, entry.name.size() - kSuffix.size());
      std::string where = path + ": entry '" + printable(key) + "': ";
      if (!seen.insert(key).second)
        return Status::error(where + "appears twice");

      StatusOr<HostTensor> tensor = decodeEntry(*archive, entry);
      if (!tensor)
        return Status::error(where + tensor.message());
      tensors.push_back({std::move(key), std::move(*tensor)});
    }
    return tensors;
  });
}

Status writeNpz(const std::string &path, const std::vector<NamedView> &entries,
                NpzWriteOptions options) {
  return catchExceptions(path, [&]() -> Status {
    // Validate everything first, so a bad entry fails before any file exists.
    std::vector<std::string> headers;
    std::set<std::string_view> seen;
    for (const NamedView &entry : entries) {
      std::string where = path + ": entry '" + printable(entry.name) + "': ";
      if (entry.name.empty())
        return Status::error(path + ": an entry has an empty name");
      if (entry.name.find('\0') != std::string::npos)
        return Status::error(where + "name contains a NUL byte");
      if (entry.name.size() + kSuffix.size() > 0xffff)
        return Status::error(where + "name is longer than a zip entry name can be");
      if (!seen.insert(entry.name).second)
        return Status::error(where + "appears twice");
      StatusOr<std::string> header = encodeNpyHeader(entry.view.dtype, entry.view.shape);
      if (!header)
        return Status::error(where + header.message());
      if (entry.view.bytes() != 0 && entry.view.data == nullptr)
        return Status::error(where + "tensor has no data");
      headers.push_back(std::move(*header));
    }

    StatusOr<AtomicFile> file = AtomicFile::create(path);
    if (!file)
      return file.status();
    ZipWriter zip(*file, options.forceZip64);
    for (size_t i = 0; i < entries.size(); ++i) {
      const NamedView &entry = entries[i];
      std::vector<ByteSpan> pieces = {{headers[i].data(), headers[i].size()},
                                      {entry.view.data, entry.view.bytes()}};
      if (Status status = zip.addStored(entry.name + std::string(kSuffix), pieces); !status)
        return status;
    }
    if (Status status = zip.finish(); !status)
      return status;
    return file->commit();
  });
}

Status writeNpz(const std::string &path, const std::vector<NamedTensor> &entries,
                NpzWriteOptions options) {
  return catchExceptions(path, [&]() -> Status {
    std::vector<NamedView> views;
    views.reserve(entries.size());
    for (const NamedTensor &entry : entries) {
      StatusOr<TensorView> view = viewOf(entry.tensor);
      if (!view)
        return Status::error(path + ": entry '" + printable(entry.name) + "': " + view.message());
      views.push_back({entry.name, std::move(*view)});
    }
    return writeNpz(path, views, options);
  });
}

} // namespace shardc::rt::io
