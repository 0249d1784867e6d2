//===- ElementTypes.cpp - MLIR element types as runtime dtypes ------------===//
#include "compiler/Artifact/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace shardc::artifact {

// The schema's DType and the runtime's list the types in the same order.
static_assert(static_cast<int>(schema::DType::F32) == static_cast<int>(rt::DType::F32));
static_assert(static_cast<int>(schema::DType::Bool) == static_cast<int>(rt::DType::Bool));
static_assert(static_cast<int>(schema::DType::U8) == static_cast<int>(rt::DType::U8));

std::optional<rt::DType> runtimeDType(mlir::Type type) {
  if (type.isF32())
    return rt::DType::F32;
  if (type.isF16())
    return rt::DType::F16;
  if (type.isBF16())
    return rt::DType::BF16;
  if (type.isF64())
    return rt::DType::F64;
  if (type.isInteger(1))
    return rt::DType::Bool;
  if (type.isUnsignedInteger(8))
    return rt::DType::U8;
  if (type.isSignlessInteger(8))
    return rt::DType::I8;
  if (type.isSignlessInteger(16))
    return rt::DType::I16;
  if (type.isSignlessInteger(32))
    return rt::DType::I32;
  if (type.isSignlessInteger(64))
    return rt::DType::I64;
  return std::nullopt;
}

std::optional<schema::DType> schemaDType(mlir::Type type) {
  std::optional<rt::DType> dtype = runtimeDType(type);
  if (!dtype)
    return std::nullopt;
  return static_cast<schema::DType>(static_cast<uint8_t>(*dtype));
}

} // namespace shardc::artifact
