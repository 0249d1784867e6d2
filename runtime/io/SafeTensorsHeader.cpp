//===- SafeTensorsHeader.cpp - The JSON header of a safetensors file ------===//

#include "runtime/io/SafeTensorsHeader.h"

#include "runtime/io/SafeTensors.h"
#include "runtime/io/TensorBytes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <tuple>

namespace shardc::rt::io {

namespace {

using Json = nlohmann::json;

constexpr std::pair<DType, const char *> kDtypeNames[] = {
    {DType::F32, "F32"}, {DType::F16, "F16"},  {DType::BF16, "BF16"}, {DType::F64, "F64"},
    {DType::I64, "I64"}, {DType::I32, "I32"},  {DType::I16, "I16"},   {DType::I8, "I8"},
    {DType::U8, "U8"},   {DType::Bool, "BOOL"}};

/// A valid header nests three deep ({"w": {"shape": [2]}}); anything much
/// deeper is hostile, and refusing it early bounds the parser's work.
constexpr int kMaxDepth = 8;

/// Thrown from the parser callback to stop parsing; caught right there.
struct ParseAbort {
  std::string message;
};

/// Parses JSON, refusing duplicate keys (nlohmann would keep the last one
/// silently, so two entries for one tensor could hide a bad one) and deep
/// nesting.
StatusOr<Json> parseStrictJson(std::string_view text) {
  std::vector<std::set<std::string>> openObjects;
  auto callback = [&](int depth, Json::parse_event_t event, Json &parsed) {
    if (depth > kMaxDepth)
      throw ParseAbort{"header JSON nests deeper than " + std::to_string(kMaxDepth) + " levels"};
    if (event == Json::parse_event_t::object_start) {
      openObjects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      if (!openObjects.empty())
        openObjects.pop_back();
    } else if (event == Json::parse_event_t::key && !openObjects.empty()) {
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!openObjects.back().insert(key).second)
        throw ParseAbort{"header JSON has key '" + printable(key) + "' twice"};
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const ParseAbort &abort) {
    return Status::error(abort.message);
  } catch (const Json::exception &e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag.
    std::string what = e.what();
    size_t tagEnd = what.find("] ");
    if (tagEnd != std::string::npos)
      what = what.substr(tagEnd + 2);
    return Status::error("header is not valid JSON: " + printable(what));
  }
}

/// A JSON integer in [0, INT64_MAX], the range of dims and offsets.
bool asIndex(const Json &value, uint64_t &out) {
  if (!value.is_number_unsigned())
    return false;
  out = value.get<uint64_t>();
  return out <= static_cast<uint64_t>(INT64_MAX);
}

std::string formatRange(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

Status parseMetadata(const Json &value, std::map<std::string, std::string> &metadata) {
  if (value.is_null()) // what the reference writer emits for "no metadata"
    return {};
  if (!value.is_object())
    return Status::error("'__metadata__' is not an object");
  for (const auto &[key, item] : value.items()) {
    if (!item.is_string())
      return Status::error("'__metadata__' value of '" + printable(key) + "' is not a string");
    metadata[key] = item.get<std::string>();
  }
  return {};
}

StatusOr<SafeTensorsRecord> parseRecord(const std::string &name, const Json &value,
                                        uint64_t bufferSize) {
  std::string where = "tensor '" + printable(name) + "': ";
  if (!value.is_object())
    return Status::error(where + "entry is not an object");
  for (const auto &[key, item] : value.items()) {
    (void)item;
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      return Status::error(where + "unexpected key '" + printable(key) + "'");
  }

  auto dtypeIt = value.find("dtype");
  if (dtypeIt == value.end() || !dtypeIt->is_string())
    return Status::error(where + "'dtype' is missing or not a string");
  const std::string &dtypeText = dtypeIt->get_ref<const std::string &>();
  std::optional<DType> dtype = dtypeFromSafeTensorsName(dtypeText);
  if (!dtype)
    return Status::error(where + "unsupported dtype '" + printable(dtypeText) + "'");

  auto shapeIt = value.find("shape");
  if (shapeIt == value.end() || !shapeIt->is_array())
    return Status::error(where + "'shape' is missing or not an array");
  Shape shape;
  for (const Json &dim : *shapeIt) {
    uint64_t size;
    if (!asIndex(dim, size))
      return Status::error(where + "'shape' must hold non-negative integers");
    shape.push_back(static_cast<int64_t>(size));
  }

  auto offsetsIt = value.find("data_offsets");
  uint64_t begin, end;
  if (offsetsIt == value.end() || !offsetsIt->is_array() || offsetsIt->size() != 2 ||
      !asIndex((*offsetsIt)[0], begin) || !asIndex((*offsetsIt)[1], end))
    return Status::error(where + "'data_offsets' must be [begin, end], two non-negative integers");

  std::optional<uint64_t> bytes = checkedByteCount(*dtype, shape);
  if (!bytes)
    return Status::error(where + "shape " + formatShape(shape) + " is too large");
  if (begin > end)
    return Status::error(where + "data_offsets " + formatRange(begin, end) +
                         " end before they begin");
  if (end > bufferSize)
    return Status::error(where + "data_offsets " + formatRange(begin, end) +
                         " run past the data buffer of " + std::to_string(bufferSize) + " bytes");
  if (end - begin != *bytes)
    return Status::error(where + "data_offsets " + formatRange(begin, end) + " hold " +
                         std::to_string(end - begin) + " bytes, " + dtypeName(*dtype) + " " +
                         formatShape(shape) + " needs " + std::to_string(*bytes));
  return SafeTensorsRecord{name, *dtype, std::move(shape), begin, end};
}

} // namespace

const char *safeTensorsDtypeName(DType dtype) {
  for (auto [value, name] : kDtypeNames)
    if (value == dtype)
      return name;
  return "unknown";
}

std::optional<DType> dtypeFromSafeTensorsName(std::string_view name) {
  for (auto [value, known] : kDtypeNames)
    if (name == known)
      return value;
  return std::nullopt;
}

StatusOr<SafeTensorsHeader> parseSafeTensorsHeader(std::string_view json, uint64_t bufferSize) {
  StatusOr<Json> root = parseStrictJson(json);
  if (!root)
    return root.status();
  if (!root->is_object())
    return Status::error("header is not a JSON object");

  SafeTensorsHeader header;
  for (const auto &[key, value] : root->items()) {
    if (key == "__metadata__") {
      if (Status status = parseMetadata(value, header.metadata); !status)
        return status;
      continue;
    }
    StatusOr<SafeTensorsRecord> record = parseRecord(key, value, bufferSize);
    if (!record)
      return record.status();
    header.tensors.push_back(std::move(*record));
  }

  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const SafeTensorsRecord &a, const SafeTensorsRecord &b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  // Sorted by begin, a tensor overlaps an earlier one exactly when it begins
  // before the furthest end so far. Empty tensors occupy no bytes.
  const SafeTensorsRecord *furthest = nullptr;
  for (const SafeTensorsRecord &record : header.tensors) {
    if (record.begin == record.end)
      continue;
    if (furthest && record.begin < furthest->end)
      return Status::error("tensors '" + printable(furthest->name) + "' " +
                           formatRange(furthest->begin, furthest->end) + " and '" +
                           printable(record.name) + "' " + formatRange(record.begin, record.end) +
                           " overlap");
    if (!furthest || record.end > furthest->end)
      furthest = &record;
  }
  return header;
}

StatusOr<std::string> formatSafeTensorsHeader(const SafeTensorsHeader &header) {
  // ordered_json keeps insertion order, so the header lists tensors in file
  // order and a person reading it sees the layout.
  using OrderedJson = nlohmann::ordered_json;
  OrderedJson root = OrderedJson::object();
  if (!header.metadata.empty()) {
    OrderedJson metadata = OrderedJson::object();
    for (const auto &[key, value] : header.metadata) {
      if (!isValidUtf8(key) || !isValidUtf8(value))
        return Status::error("metadata '" + printable(key) + "' is not valid UTF-8");
      metadata[key] = value;
    }
    root["__metadata__"] = std::move(metadata);
  }
  for (const SafeTensorsRecord &record : header.tensors) {
    if (!isValidUtf8(record.name))
      return Status::error("tensor name '" + printable(record.name) + "' is not valid UTF-8");
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = safeTensorsDtypeName(record.dtype);
    entry["shape"] = record.shape;
    entry["data_offsets"] = OrderedJson::array({record.begin, record.end});
    root[record.name] = std::move(entry);
  }
  return root.dump();
}

bool isValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t length;
    uint32_t codePoint;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xe0) == 0xc0) {
      length = 2;
      codePoint = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      codePoint = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      codePoint = lead & 0x07;
    } else {
      return false;
    }
    if (text.size() - i < length)
      return false;
    for (size_t k = 1; k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80)
        return false;
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid.
    static const uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (codePoint < kMinimum[length] || (codePoint >= 0xd800 && codePoint <= 0xdfff) ||
        codePoint > 0x10ffff)
      return false;
    i += length;
  }
  return true;
}

} // namespace shardc::rt::io
