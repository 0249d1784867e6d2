//===- ModelLoader.cpp - read an ONNX model file into a ModelProto --------===//
#include "compiler/Import/ModelLoader.h"

#include "onnx/defs/parser.h"

#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>

using namespace llvm;

namespace shardc::import {
namespace {

Error fileError(StringRef path, const Twine &message) {
  return createStringError(inconvertibleErrorCode(), path + ": " + message);
}

// Field numbers of onnx.proto used to locate raw_data without a second parse.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorName = 8;
constexpr uint32_t kTensorRawData = 9;

/// Walks the protobuf wire format of a ModelProto and records, for every
/// top-level initializer, the file offset and size of its raw_data field.
/// The message was already parsed successfully, so malformed input only
/// stops the walk early.
class RawDataLocator {
public:
  explicit RawDataLocator(StringRef bytes) : bytes(bytes) {}

  StringMap<ByteRange> locate() {
    forEachField(0, bytes.size(), [&](uint32_t field, int64_t begin, int64_t end) {
      if (field == kModelGraph)
        forEachField(begin, end, [&](uint32_t f, int64_t b, int64_t e) {
          if (f == kGraphInitializer)
            recordTensor(b, e);
        });
    });
    return std::move(found);
  }

private:
  template <typename Visit>
  void forEachField(int64_t begin, int64_t end, Visit visit) {
    auto *data = reinterpret_cast<const uint8_t *>(bytes.data()) + begin;
    google::protobuf::io::CodedInputStream in(data, static_cast<int>(end - begin));
    in.SetTotalBytesLimit(INT_MAX);
    while (uint32_t tag = in.ReadTag()) {
      uint32_t field = tag >> 3, wireType = tag & 7;
      if (wireType == 2) {
        uint32_t length;
        if (!in.ReadVarint32(&length))
          return;
        int64_t start = begin + in.CurrentPosition();
        if (start + length > end)
          return;
        visit(field, start, start + length);
        if (!in.Skip(static_cast<int>(length)))
          return;
      } else if (!skipScalar(in, wireType)) {
        return;
      }
    }
  }

  static bool skipScalar(google::protobuf::io::CodedInputStream &in, uint32_t wireType) {
    uint64_t ignored64;
    uint32_t ignored32;
    switch (wireType) {
    case 0: return in.ReadVarint64(&ignored64);
    case 1: return in.ReadLittleEndian64(&ignored64);
    case 5: return in.ReadLittleEndian32(&ignored32);
    default: return false; // groups are not used by onnx.proto
    }
  }

  void recordTensor(int64_t begin, int64_t end) {
    std::string name;
    ByteRange raw{-1, 0};
    forEachField(begin, end, [&](uint32_t field, int64_t b, int64_t e) {
      if (field == kTensorName)
        name = bytes.slice(b, e).str();
      else if (field == kTensorRawData)
        raw = ByteRange{b, e - b};
    });
    if (!name.empty() && raw.offset >= 0)
      found[name] = raw;
  }

  StringRef bytes;
  StringMap<ByteRange> found;
};

} // namespace

Expected<LoadedModel> parseModel(StringRef bytes, StringRef path) {
  LoadedModel model;
  model.path = path.str();
  if (bytes.empty())
    return fileError(path, "the file is empty; expected an ONNX model");
  if (path.ends_with(".onnxtext")) {
    std::string text = bytes.str(); // the parser wants a NUL-terminated string
    std::string message;
    // libonnx's parser reports most errors in its Status but lets the
    // std::stoll/stod it uses for numbers throw on malformed ones.
    try {
      onnx::OnnxParser parser(text.c_str());
      onnx::Common::Status status = parser.Parse(model.proto);
      if (!status.IsOK())
        message = status.ErrorMessage();
    } catch (const std::exception &error) {
      message = std::string("malformed number (") + error.what() + ")";
    }
    if (!message.empty()) {
      std::replace(message.begin(), message.end(), '\n', ' ');
      return fileError(path, "not valid ONNX text format: " + message);
    }
    if (!model.proto.has_graph())
      return fileError(path, "the model has no graph");
    return model;
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return fileError(path, "the file is over 2 GiB, more than protobuf can hold; expected the "
                           "weights of such models in external data");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  if (!model.proto.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return fileError(path, "not a valid ONNX protobuf (truncated or corrupted file?)");
  if (!model.proto.has_graph())
    return fileError(path, "the model has no graph (truncated or not an ONNX model?)");
  model.embeddedWeights = RawDataLocator(bytes).locate();
  return model;
}

Expected<LoadedModel> loadModel(StringRef path) {
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fileError(path, "cannot read the file: " + buffer.getError().message());
  return parseModel((*buffer)->getBuffer(), path);
}

} // namespace shardc::import
