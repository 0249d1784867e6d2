//===- ScalarType.cpp - Element type properties and normalization ---------===//

#include "dialects/Graph/ConstEval/ScalarType.h"

#include "dialects/Graph/ConstEval/FloatFormats.h"

#include <limits>

namespace shardc::constfold {

bool isFloat(ScalarType type) {
  switch (type) {
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::F32:
  case ScalarType::F64:
    return true;
  default:
    return false;
  }
}

bool isInteger(ScalarType type) {
  switch (type) {
  case ScalarType::I8:
  case ScalarType::I16:
  case ScalarType::I32:
  case ScalarType::I64:
  case ScalarType::U8:
    return true;
  default:
    return false;
  }
}

int bitWidth(ScalarType type) {
  switch (type) {
  case ScalarType::Bool:
  case ScalarType::I8:
  case ScalarType::U8:
    return 8;
  case ScalarType::I16:
  case ScalarType::F16:
  case ScalarType::BF16:
    return 16;
  case ScalarType::I32:
  case ScalarType::F32:
    return 32;
  case ScalarType::I64:
  case ScalarType::F64:
    return 64;
  }
  return 0;
}

const char *typeName(ScalarType type) {
  switch (type) {
  case ScalarType::Bool: return "bool";
  case ScalarType::I8: return "i8";
  case ScalarType::I16: return "i16";
  case ScalarType::I32: return "i32";
  case ScalarType::I64: return "i64";
  case ScalarType::U8: return "u8";
  case ScalarType::F16: return "f16";
  case ScalarType::BF16: return "bf16";
  case ScalarType::F32: return "f32";
  case ScalarType::F64: return "f64";
  }
  return "?";
}

int64_t minValue(ScalarType type) {
  switch (type) {
  case ScalarType::I8: return std::numeric_limits<int8_t>::min();
  case ScalarType::I16: return std::numeric_limits<int16_t>::min();
  case ScalarType::I32: return std::numeric_limits<int32_t>::min();
  case ScalarType::I64: return std::numeric_limits<int64_t>::min();
  default: return 0; // Bool, U8 (and floats, where it is meaningless)
  }
}

int64_t maxValue(ScalarType type) {
  switch (type) {
  case ScalarType::Bool: return 1;
  case ScalarType::I8: return std::numeric_limits<int8_t>::max();
  case ScalarType::I16: return std::numeric_limits<int16_t>::max();
  case ScalarType::I32: return std::numeric_limits<int32_t>::max();
  case ScalarType::I64: return std::numeric_limits<int64_t>::max();
  case ScalarType::U8: return std::numeric_limits<uint8_t>::max();
  default: return 0;
  }
}

bool fitsIn(ScalarType type, int64_t value) {
  return !isFloat(type) && value >= minValue(type) && value <= maxValue(type);
}

namespace {
// Interprets the low `width` bits as a two's-complement number. Written with
// unsigned arithmetic only: converting an out-of-range uint64_t to int64_t is
// implementation-defined before C++20.
int64_t signExtend(uint64_t bits, int width) {
  uint64_t low = width == 64 ? bits : bits & ((uint64_t(1) << width) - 1);
  uint64_t signBit = uint64_t(1) << (width - 1);
  if (!(low & signBit))
    return int64_t(low);
  // Negative: the value is low - 2^width, i.e. -(2^width - low).
  uint64_t magnitude = (width == 64 ? 0 : (uint64_t(1) << width)) - low;
  if (magnitude == (uint64_t(1) << 63))
    return std::numeric_limits<int64_t>::min();
  return -int64_t(magnitude);
}
} // namespace

int64_t wrapInt(ScalarType type, uint64_t bits) {
  switch (type) {
  case ScalarType::Bool: return bits != 0;
  case ScalarType::U8: return int64_t(bits & 0xff);
  case ScalarType::I8: return signExtend(bits, 8);
  case ScalarType::I16: return signExtend(bits, 16);
  case ScalarType::I32: return signExtend(bits, 32);
  case ScalarType::I64: return signExtend(bits, 64);
  default: return 0; // not an integer type
  }
}

double roundFloat(ScalarType type, double value) {
  switch (type) {
  case ScalarType::F16: return roundToF16(value);
  case ScalarType::BF16: return roundToBF16(value);
  case ScalarType::F32: return roundToF32(value);
  default: return value;
  }
}

double intToFloat(ScalarType type, int64_t value) {
  if (type == ScalarType::F64)
    return double(value); // the hardware conversion rounds once, to nearest even
  // Every int64 with at most 53 significant bits is exact in a double.
  uint64_t magnitude = value < 0 ? uint64_t(0) - uint64_t(value) : uint64_t(value);
  if (magnitude > (uint64_t(1) << 53)) {
    // Round to odd onto 53 bits: drop the low bits but keep a sticky 1 if any
    // was set. A later round-to-nearest to at most 51 bits then gives the same
    // answer as rounding the exact integer once.
    int shift = 0;
    while ((magnitude >> shift) >= (uint64_t(1) << 53))
      ++shift;
    uint64_t kept = (magnitude >> shift) << shift;
    if (kept != magnitude)
      kept |= uint64_t(1) << shift;
    double odd = double(kept); // exact: at most 53 significant bits
    return roundFloat(type, value < 0 ? -odd : odd);
  }
  return roundFloat(type, double(value));
}

} // namespace shardc::constfold
