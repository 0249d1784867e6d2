//===- OnnxModel.cpp - write trained initializers into an ONNX model ------===//
#include "runtime/io/OnnxModel.h"

#include <climits>
#include <set>

namespace shardc::rt::io {
namespace {

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kModelMetadataProps = 14;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorDims = 1;
constexpr uint32_t kTensorDataType = 2;
constexpr uint32_t kTensorName = 8;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kEntryKey = 1;

constexpr uint32_t kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5;

/// protobuf parses no message of 2 GiB or more.
constexpr uint64_t kMaxMessageBytes = INT_MAX;

/// The fields a TensorProto holds its data in (float_data, int32_data,
/// string_data, int64_data, raw_data, double_data, uint64_data,
/// external_data, data_location): a written value replaces them all.
bool isDataField(uint32_t field) {
  switch (field) {
  case 4: case 5: case 6: case 7: case 9: case 10: case 11: case 13: case 14:
    return true;
  default:
    return false;
  }
}

struct Field {
  uint32_t number = 0, wire = 0;
  uint64_t varint = 0;       ///< wire type 0
  std::string_view payload;  ///< wire type 2
  std::string_view whole;    ///< the field's bytes, tag included
};

/// The fields of one message, each checked against the bytes left.
class FieldReader {
public:
  explicit FieldReader(std::string_view bytes) : bytes_(bytes) {}

  /// The next field into `field`: false at the end of the message or on a
  /// malformed field (then failed() says so).
  bool next(Field &field) {
    if (failed_ || at_ == bytes_.size())
      return false;
    const size_t begin = at_;
    uint64_t tag = 0;
    if (!varint(tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1FFFFFFF)
      return fail();
    field.number = static_cast<uint32_t>(tag >> 3);
    field.wire = static_cast<uint32_t>(tag & 7);
    field.payload = {};
    switch (field.wire) {
    case kVarint:
      if (!varint(field.varint))
        return fail();
      break;
    case kFixed64:
    case kFixed32: {
      const size_t width = field.wire == kFixed64 ? 8 : 4;
      if (bytes_.size() - at_ < width)
        return fail();
      at_ += width;
      break;
    }
    case kBytes: {
      uint64_t length = 0;
      if (!varint(length) || length > bytes_.size() - at_)
        return fail();
      field.payload = bytes_.substr(at_, static_cast<size_t>(length));
      at_ += static_cast<size_t>(length);
      break;
    }
    default: // groups (3, 4): onnx.proto has none
      return fail();
    }
    field.whole = bytes_.substr(begin, at_ - begin);
    return true;
  }

  bool failed() const { return failed_; }

private:
  bool varint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size())
        return false;
      const uint8_t byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  bool fail() {
    failed_ = true;
    return false;
  }

  std::string_view bytes_;
  size_t at_ = 0;
  bool failed_ = false;
};

std::string varintBytes(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7F;
    value >>= 7;
    out.push_back(static_cast<char>(value ? byte | 0x80 : byte));
  } while (value);
  return out;
}

/// A length-delimited field's tag and length.
std::string header(uint32_t field, uint64_t length) {
  return varintBytes(uint64_t(field) << 3 | kBytes) + varintBytes(length);
}

/// Reads the model's initializers and writes it with the values.
class ModelWriter {
public:
  ModelWriter(const std::map<std::string, InitializerValue> &values, const std::string &what)
      : values_(values), what_(what) {}

  /// Checks every trained initializer once, before anything is written.
  Status check(std::string_view model) {
    std::set<std::string> found;
    Status status;
    forEach(model, [&](const Field &field) {
      if (field.number != kModelGraph || field.wire != kBytes)
        return true;
      return forEach(field.payload, [&](const Field &entry) {
        if (entry.number != kGraphInitializer || entry.wire != kBytes)
          return true;
        std::string name;
        if (!nameOf(entry.payload, name))
          return false;
        auto value = values_.find(name);
        if (value == values_.end())
          return true;
        if (!found.insert(name).second) {
          status = Status::error(what_ + ": holds the initializer '" + name + "' twice");
          return false;
        }
        status = checkTensor(entry.payload, name, value->second);
        return status.ok();
      });
    });
    if (!status)
      return status;
    if (malformed_)
      return Status::error(what_ + ": is not a valid ONNX model (malformed protobuf)");
    for (const auto &[name, value] : values_)
      if (!found.count(name))
        return Status::error(what_ + ": has no initializer '" + name + "' to write");
    return {};
  }

  uint64_t modelSize(std::string_view model) {
    uint64_t size = 0;
    forEach(model, [&](const Field &field) {
      if (field.number == kModelGraph && field.wire == kBytes) {
        const uint64_t graph = graphSize(field.payload);
        size += header(kModelGraph, graph).size() + graph;
      } else {
        size += field.whole.size();
      }
      return true;
    });
    return size;
  }

  Status writeModel(std::string_view model, AtomicFile &out) {
    Status status;
    forEach(model, [&](const Field &field) {
      if (field.number == kModelGraph && field.wire == kBytes) {
        status = out.write(header(kModelGraph, graphSize(field.payload)));
        if (status)
          status = writeGraph(field.payload, out);
      } else {
        status = out.write(field.whole.data(), field.whole.size());
      }
      return status.ok();
    });
    return status;
  }

private:
  /// Calls `visit` on each field of `message` until it returns false;
  /// false when it did or the message is malformed.
  template <typename Visit> bool forEach(std::string_view message, Visit visit) {
    FieldReader reader(message);
    Field field;
    while (reader.next(field))
      if (!visit(field))
        return false;
    malformed_ = malformed_ || reader.failed();
    return !reader.failed();
  }

  bool nameOf(std::string_view tensor, std::string &name) {
    return forEach(tensor, [&](const Field &field) {
      if (field.number == kTensorName && field.wire == kBytes)
        name.assign(field.payload);
      return true;
    });
  }

  Status checkTensor(std::string_view tensor, const std::string &name,
                     const InitializerValue &value) {
    int64_t dataType = 0;
    Shape dims;
    bool dimsOk = forEach(tensor, [&](const Field &field) {
      if (field.number == kTensorDataType && field.wire == kVarint)
        dataType = static_cast<int64_t>(field.varint);
      if (field.number != kTensorDims)
        return true;
      if (field.wire == kVarint) {
        dims.push_back(static_cast<int64_t>(field.varint));
        return true;
      }
      if (field.wire != kBytes)
        return false;
      // Packed dims: varints one after another.
      return forEachPacked(field.payload, dims);
    });
    if (!dimsOk)
      return Status::error(what_ + ": initializer '" + name + "' has malformed dims");
    if (dataType != onnxDataType(value.dtype) || dims != value.shape)
      return Status::error(what_ + ": initializer '" + name + "' is of ONNX type " +
                           std::to_string(dataType) + " and dims " + formatShape(dims) +
                           "; the trained weight is " + dtypeName(value.dtype) + " " +
                           formatShape(value.shape));
    return {};
  }

  static bool forEachPacked(std::string_view packed, Shape &dims) {
    size_t at = 0;
    while (at < packed.size()) {
      uint64_t value = 0;
      bool done = false;
      for (int shift = 0; shift < 64 && at < packed.size(); shift += 7) {
        const uint8_t byte = static_cast<uint8_t>(packed[at++]);
        value |= uint64_t(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
          done = true;
          break;
        }
      }
      if (!done)
        return false;
      dims.push_back(static_cast<int64_t>(value));
    }
    return true;
  }

  /// The trained value of the initializer `tensor`, if it has one.
  const InitializerValue *valueOf(std::string_view tensor) {
    std::string name;
    nameOf(tensor, name);
    auto value = values_.find(name);
    return value == values_.end() ? nullptr : &value->second;
  }

  static uint64_t valueBytes(const InitializerValue &value) {
    return static_cast<uint64_t>(numElements(value.shape)) * dtypeSize(value.dtype);
  }

  uint64_t tensorSize(std::string_view tensor, const InitializerValue &value) {
    uint64_t size = 0;
    forEach(tensor, [&](const Field &field) {
      if (!isDataField(field.number))
        size += field.whole.size();
      return true;
    });
    return size + header(kTensorRawData, valueBytes(value)).size() + valueBytes(value);
  }

  uint64_t graphSize(std::string_view graph) {
    uint64_t size = 0;
    forEach(graph, [&](const Field &field) {
      const InitializerValue *value = nullptr;
      if (field.number == kGraphInitializer && field.wire == kBytes)
        value = valueOf(field.payload);
      if (value) {
        const uint64_t tensor = tensorSize(field.payload, *value);
        size += header(kGraphInitializer, tensor).size() + tensor;
      } else {
        size += field.whole.size();
      }
      return true;
    });
    return size;
  }

  Status writeGraph(std::string_view graph, AtomicFile &out) {
    Status status;
    forEach(graph, [&](const Field &field) {
      const InitializerValue *value = nullptr;
      if (field.number == kGraphInitializer && field.wire == kBytes)
        value = valueOf(field.payload);
      if (!value) {
        status = out.write(field.whole.data(), field.whole.size());
        return status.ok();
      }
      status = out.write(header(kGraphInitializer, tensorSize(field.payload, *value)));
      forEach(field.payload, [&](const Field &part) {
        if (status && !isDataField(part.number))
          status = out.write(part.whole.data(), part.whole.size());
        return status.ok();
      });
      if (status)
        status = out.write(header(kTensorRawData, valueBytes(*value)));
      if (status)
        status = out.write(value->data, static_cast<size_t>(valueBytes(*value)));
      return status.ok();
    });
    return status;
  }

  const std::map<std::string, InitializerValue> &values_;
  const std::string &what_;
  bool malformed_ = false;
};

} // namespace

int onnxDataType(DType dtype) {
  switch (dtype) {
  case DType::F32: return 1;
  case DType::U8: return 2;
  case DType::I8: return 3;
  case DType::I16: return 5;
  case DType::I32: return 6;
  case DType::I64: return 7;
  case DType::Bool: return 9;
  case DType::F16: return 10;
  case DType::F64: return 11;
  case DType::BF16: return 16;
  }
  return 0;
}

Status writeModelWithInitializers(std::string_view model,
                                  const std::map<std::string, InitializerValue> &values,
                                  const std::string &what, AtomicFile &out) {
  ModelWriter writer(values, what);
  if (Status status = writer.check(model); !status)
    return status;
  const uint64_t size = writer.modelSize(model);
  if (size > kMaxMessageBytes)
    return Status::error("the trained model is " + std::to_string(size) +
                         " bytes, over protobuf's 2 GiB; an export with external data is not "
                         "supported yet");
  return writer.writeModel(model, out);
}

bool hasMetadataKey(std::string_view model, std::string_view key) {
  FieldReader reader(model);
  Field field;
  while (reader.next(field)) {
    if (field.number != kModelMetadataProps || field.wire != kBytes)
      continue;
    FieldReader entry(field.payload);
    Field part;
    while (entry.next(part))
      if (part.number == kEntryKey && part.wire == kBytes && part.payload == key)
        return true;
  }
  return false;
}

} // namespace shardc::rt::io
