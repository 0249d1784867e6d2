//===- ScalarType.h - Element types of folded constants ---------*- C++ -*-===//
//
// The element types the folders meet in imported ONNX graphs, and the two
// normalizations every op applies to its results so that a HostTensor always
// holds exactly the values the runtime would hold: integers wrapped to the
// type's bit width, floats rounded to the type's precision.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCALARTYPE_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCALARTYPE_H

#include <cstdint>

namespace shardc::constfold {

enum class ScalarType { Bool, I8, I16, I32, I64, U8, F16, BF16, F32, F64 };

/// F16, BF16, F32, F64.
bool isFloat(ScalarType type);
/// I8, I16, I32, I64 and U8; not Bool.
bool isInteger(ScalarType type);
/// Storage width in bits (Bool counts as 8, like ONNX stores it).
int bitWidth(ScalarType type);
/// Short MLIR-style name for messages: "bool", "i32", "bf16", ...
const char *typeName(ScalarType type);

/// Smallest/largest value of an integer or Bool type (0/1 for Bool). Meaningless
/// (0) for float types.
int64_t minValue(ScalarType type);
int64_t maxValue(ScalarType type);
/// Whether `value` is representable in the integer or Bool type.
bool fitsIn(ScalarType type, int64_t value);

/// Reduces two's-complement bits to the value an integer of `type` holds: the
/// low bitWidth(type) bits, sign-extended for signed types (so 2^31 as I32 is
/// -2^31, 300 as U8 is 44). Integer arithmetic is done in uint64_t, where
/// wrapping is defined, and passed through this. For Bool: bits != 0.
int64_t wrapInt(ScalarType type, uint64_t bits);

/// Rounds `value` to the nearest value of the float `type`, ties to even,
/// overflowing to +-inf like IEEE conversions. F64 is the identity.
double roundFloat(ScalarType type, double value);

/// Converts an integer to the float `type` with a single correct rounding
/// (a plain int64 -> double -> f32 conversion would round twice above 2^53).
double intToFloat(ScalarType type, int64_t value);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_SCALARTYPE_H
