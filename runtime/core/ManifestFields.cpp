//===- ManifestFields.cpp - a manifest's fields, read by their path -------===//
#include "runtime/core/ManifestFields.h"

#include "runtime/io/ErrorText.h"

#include <nlohmann/json.hpp>

namespace shardc::rt {

Status FieldError::status(const std::string &manifestPath) const {
  return Status::error(manifestPath + ": " + io::printable(field) + ": " + message);
}

void wrong(const std::string &field, const std::string &message) {
  throw FieldError{field, message};
}

const nlohmann::json &member(const nlohmann::json &value, const std::string &key,
                             const std::string &field) {
  if (!object(value, field).contains(key))
    wrong(field.empty() ? key : field + "." + key, "is missing");
  return value.at(key);
}

const nlohmann::json &object(const nlohmann::json &value, const std::string &field) {
  if (!value.is_object())
    wrong(field, "expected an object");
  return value;
}

const nlohmann::json &array(const nlohmann::json &value, const std::string &field) {
  if (!value.is_array())
    wrong(field, "expected an array");
  return value;
}

int64_t integer(const nlohmann::json &value, const std::string &field, int64_t minimum,
                int64_t maximum) {
  if (!value.is_number_integer())
    wrong(field, std::string("expected an integer, got ") + value.type_name());
  // An unsigned value past int64 reads as negative: compare it as unsigned.
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    wrong(field, "is out of range");
  int64_t number = value.get<int64_t>();
  if (number < minimum || number > maximum)
    wrong(field, std::to_string(number) + " is out of range [" + std::to_string(minimum) + ", " +
                     std::to_string(maximum) + "]");
  return number;
}

std::string text(const nlohmann::json &value, const std::string &field) {
  if (!value.is_string())
    wrong(field, std::string("expected a string, got ") + value.type_name());
  return value.get<std::string>();
}

DType dtypeOf(const nlohmann::json &value, const std::string &field) {
  std::string name = text(value, field);
  std::optional<DType> dtype = dtypeFromName(name);
  if (!dtype)
    wrong(field, "unknown dtype '" + io::printable(name) + "'");
  return *dtype;
}

Shape shapeOf(const nlohmann::json &value, DType dtype, const std::string &field) {
  Shape shape;
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (size_t i = 0; i < array(value, field).size(); ++i) {
    int64_t dim = integer(value[i], field + "[" + std::to_string(i) + "]", 0,
                          std::numeric_limits<int64_t>::max());
    if (dim && bytes > std::numeric_limits<int64_t>::max() / dim)
      wrong(field, "holds more bytes than fit in 64 bits");
    bytes *= dim;
    shape.push_back(dim);
  }
  return shape;
}

} // namespace shardc::rt
