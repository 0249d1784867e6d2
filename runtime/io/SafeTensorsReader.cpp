//===- SafeTensorsReader.cpp - Read and validate a safetensors file -------===//

#include "runtime/io/SafeTensors.h"

#include "runtime/io/ByteOrder.h"
#include "runtime/io/SafeTensorsHeader.h"

namespace shardc::rt::io {

namespace {
/// The limit Hugging Face's reader enforces too: a real header is a few
/// hundred bytes per tensor, and the cap bounds what a hostile length can
/// make the JSON parser allocate.
constexpr uint64_t kMaxHeaderLength = 100'000'000;
constexpr uint64_t kLengthFieldSize = 8;
} // namespace

StatusOr<SafeTensorsFile> SafeTensorsFile::open(const std::string &path) {
  StatusOr<FileCopy> file = FileCopy::read(path);
  if (!file)
    return file.status();
  return parse(std::move(*file));
}

StatusOr<SafeTensorsFile> SafeTensorsFile::parse(FileCopy file) {
  const std::string path = file.path();
  return catchExceptions(path, [&]() -> StatusOr<SafeTensorsFile> {
    if (file.size() < kLengthFieldSize)
      return Status::error(path + ": too short to be a safetensors file (" +
                           std::to_string(file.size()) + " bytes)");
    uint64_t headerLength = loadLE64(file.data());
    if (!inRange(kLengthFieldSize, headerLength, file.size()))
      return Status::error(path + ": header length " + std::to_string(headerLength) +
                           " runs past the end of the file (" + std::to_string(file.size()) +
                           " bytes)");
    if (headerLength > kMaxHeaderLength)
      return Status::error(path + ": header length " + std::to_string(headerLength) +
                           " exceeds the limit of " + std::to_string(kMaxHeaderLength) + " bytes");

    uint64_t dataOffset = kLengthFieldSize + headerLength;
    std::string_view json(reinterpret_cast<const char *>(file.data() + kLengthFieldSize),
                          headerLength);
    StatusOr<SafeTensorsHeader> header = parseSafeTensorsHeader(json, file.size() - dataOffset);
    if (!header)
      return Status::error(path + ": " + header.message());

    SafeTensorsFile result;
    result.dataOffset_ = dataOffset;
    result.metadata_ = std::move(header->metadata);
    // The views are mutable pointers only because TensorView has no const
    // variant; the copy is PROT_READ.
    std::byte *buffer = const_cast<std::byte *>(file.data() + dataOffset);
    result.tensors_.reserve(header->tensors.size());
    for (SafeTensorsRecord &record : header->tensors)
      result.tensors_.push_back(
          {std::move(record.name),
           TensorView{buffer + record.begin, record.dtype, std::move(record.shape)}});
    // Moving the copy keeps its address, so the views stay valid.
    result.file_ = std::move(file);
    result.holds_ = std::make_unique<Holds>();
    result.holds_->count.assign(result.tensors_.size(), 0);
    return result;
  });
}

const TensorView *SafeTensorsFile::find(std::string_view name) const {
  const NamedView *entry = findTensor(tensors_, name);
  return entry ? &entry->view : nullptr;
}

StatusOr<std::shared_ptr<const void>> SafeTensorsFile::hold(std::string_view name) const {
  return catchExceptions(path(), [&]() -> StatusOr<std::shared_ptr<const void>> {
  const NamedView *entry = findTensor(tensors_, name);
  if (!entry)
    return Status::error(path() + ": holds no tensor '" + printable(name) + "'");
  const size_t index = static_cast<size_t>(entry - tensors_.data());
  const size_t offset = static_cast<size_t>(static_cast<const std::byte *>(entry->view.data) -
                                            file_.data()),
               bytes = entry->view.bytes();
  {
    std::lock_guard<std::mutex> guard(holds_->lock);
    // Bytes not let go since the load (or the last hold) are there already.
    if (Status status = file_.restore(offset, bytes); !status)
      return status;
    ++holds_->count[index];
  }
  return std::shared_ptr<const void>(entry->view.data, [this, index, offset, bytes](const void *) {
    std::lock_guard<std::mutex> guard(holds_->lock);
    if (--holds_->count[index] == 0)
      file_.drop(offset, bytes);
  });
  });
}

} // namespace shardc::rt::io
