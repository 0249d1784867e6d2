//===- Tensor.cpp - element types and tensor views of the runtime ---------===//
#include "runtime/core/Tensor.h"

namespace shardc::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64: return 8;
  case DType::F32:
  case DType::I32: return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16: return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool: return 1;
  }
  return 0;
}

namespace {
constexpr std::pair<DType, const char *> kNames[] = {
    {DType::F32, "float32"}, {DType::F16, "float16"}, {DType::BF16, "bfloat16"},
    {DType::F64, "float64"}, {DType::I64, "int64"},   {DType::I32, "int32"},
    {DType::I16, "int16"},   {DType::I8, "int8"},     {DType::U8, "uint8"},
    {DType::Bool, "bool"}};
} // namespace

const char *dtypeName(DType dtype) {
  for (auto [value, name] : kNames)
    if (value == dtype)
      return name;
  return "unknown";
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (auto [value, known] : kNames)
    if (name == known)
      return value;
  return std::nullopt;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::string formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

HostTensor::HostTensor(DType dtype, Shape shape)
    : dtype(dtype), shape(std::move(shape)),
      bytes(static_cast<size_t>(numElements(this->shape)) * dtypeSize(dtype)) {}

} // namespace shardc::rt
