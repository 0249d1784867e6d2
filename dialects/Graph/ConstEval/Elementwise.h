//===- Elementwise.h - Broadcasting elementwise ops and Cast ----*- C++ -*-===//
//
// ONNX elementwise semantics: operands broadcast multidirectionally (numpy),
// results are computed in double / 64-bit two's complement and normalized to
// the element type once, so integers wrap to their bit width and floats are
// rounded exactly once (for +, -, *, / and sqrt, computing in double and then
// rounding to f32/f16/bf16 gives the correctly rounded result).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_ELEMENTWISE_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_ELEMENTWISE_H

#include "dialects/Graph/ConstEval/HostTensor.h"

namespace shardc::constfold {

enum class BinaryOp {
  Add, Sub, Mul, Div, Pow, Max, Min, Mod, FMod,
  And, Or, Xor,
  Equal, Less, LessEqual, Greater, GreaterEqual
};

enum class UnaryOp {
  Neg, Abs, Sqrt, Rsqrt, Reciprocal, Exp, Log, Cos, Sin, Erf, Tanh, Sigmoid, Relu, Not,
  Gelu, GeluTanh, Silu, Floor, Ceil, Round, Sign
};

/// Lower-case op names for messages ("add", "greater_equal", "gelu_tanh").
const char *binaryOpName(BinaryOp op);
const char *unaryOpName(UnaryOp op);

/// Elementwise binary op with broadcasting.
/// Types:
///  - Add, Sub, Mul, Div, Max, Min: both operands of one integer or float type.
///  - Pow: any integer/float base and exponent types; the result has the base
///    type. Integer ** integer is exact (wrapping); a negative integer exponent
///    gives 1/base^n truncated toward zero (so 0 unless base is +-1, and 0 **
///    negative fails). Integer ** float computes in double and converts back
///    like cast() (fails on NaN or out-of-range results).
///  - And, Or, Xor: both Bool.
///  - Equal, Less, LessEqual, Greater, GreaterEqual: both of one type (any,
///    including Bool); the result is Bool. Comparisons with NaN are false.
///  - Mod, FMod: both operands of one integer or float type. Mod floors the
///    quotient (the result takes the divisor's sign, Python's %), FMod
///    truncates it (the dividend's sign, C's fmod and %). A zero integer
///    divisor fails; a float one gives NaN. Float Mod follows ONNX Mod-28:
///    a zero result takes the divisor's sign and a finite x with y = +-inf
///    of the other sign gives y.
/// Integer Div truncates toward zero (C semantics, like onnxruntime; numpy
/// floors instead); an integer division by zero fails. Float division by zero
/// gives IEEE inf/NaN. Max/Min propagate NaN (numpy maximum/minimum).
StatusOr<HostTensor> binary(BinaryOp op, const HostTensor &lhs, const HostTensor &rhs);

/// Elementwise unary op; the result has the operand type.
/// Types:
///  - Neg, Abs, Relu: integer or float (integers wrap: Neg/Abs of INT_MIN is
///    INT_MIN).
///  - Floor, Ceil, Round: float; the identity on integers. Round sends
///    halves to the even neighbour (2.5 -> 2, -0.5 -> -0).
///  - Sign: integer or float: -1, 0 or 1 (NaN stays NaN).
///  - Not: Bool.
///  - everything else: float only.
/// Sigmoid, Silu and Gelu are evaluated in double in forms that do not
/// overflow for large |x|; Gelu is the erf form, GeluTanh the tanh
/// approximation (ONNX Gelu approximate="tanh").
StatusOr<HostTensor> unary(UnaryOp op, const HostTensor &operand);

/// ONNX IsNaN: a Bool tensor of the float operand's shape.
StatusOr<HostTensor> isNaN(const HostTensor &operand);

/// ONNX IsInf: true where a float element is +inf (when detectPositive) or
/// -inf (when detectNegative).
StatusOr<HostTensor> isInf(const HostTensor &operand, bool detectPositive, bool detectNegative);

/// ONNX Cast.
///  - float -> integer truncates toward zero. NaN, +-inf, and values whose
///    truncation does not fit the target type FAIL (ONNX leaves them
///    undefined and runtimes disagree, so the folder must not pick an answer).
///  - integer -> integer wraps to the target width (two's complement).
///  - anything -> Bool is x != 0 (NaN -> true); Bool -> anything is 0/1.
///  - integer -> float and float -> float round once to nearest even
///    (overflow gives inf, e.g. 1e6 -> f16 is inf).
StatusOr<HostTensor> cast(const HostTensor &operand, ScalarType to);

/// ONNX Where: cond (Bool) ? x : y, all three broadcast together; x and y must
/// have the same type, which is the result type.
StatusOr<HostTensor> where(const HostTensor &cond, const HostTensor &x, const HostTensor &y);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_ELEMENTWISE_H
