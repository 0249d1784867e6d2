//===- Elementwise.h - Unary, binary, compare, where, cast ------*- C++ -*-===//
//
// The graph dialect's elementwise ops. Binary ops, compare and where
// broadcast numpy-style (right-aligned dims, each equal or 1); `out` must
// have exactly the broadcast shape, allocated by the caller.
//
// Element types:
//  - neg, abs, relu, sign: integer or float; not: bool; every other unary
//    op: float. round sends halves to the even neighbour; sign keeps NaN.
//  - is_nan, is_inf: float input, bool out.
//  - add sub mul div max min: both operands and out of one integer or float
//    type. Integers wrap to their width; integer div truncates toward zero
//    (like onnxruntime; numpy floors) and a zero divisor is an error Status
//    (INT_MIN / -1 wraps to INT_MIN). Float max/min propagate NaN.
//  - mod, fmod: both operands and out of one integer or float type; mod
//    floors the quotient (the divisor's sign, Python's %), fmod truncates it
//    (the dividend's sign, C's fmod). An integer zero divisor is an error
//    Status; a float one gives NaN.
//  - pow: base and out of one integer or float type, the exponent of any
//    integer or float type. Integer ** integer is exact with wrapping; a
//    negative integer exponent gives 1/base^n truncated (0 unless base is
//    +-1; 0 ** negative is an error). Integer ** float rounds like cast.
//  - and, or: bool. compare: both operands of one type (bool too), out bool.
//  - where: bool condition; both values and out of one type (any).
//  - cast: any type to any type, see cast() below.
// F16/BF16 are stored as such and computed in fp32; F64 in double.
//
// In place: `out` may be the very buffer of an input whose shape equals
// out's (each element is read before its own slot is written). It must not
// otherwise overlap an input.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_ELEMENTWISE_H
#define SHARDC_RUNTIME_CPU_ELEMENTWISE_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/Ops.h"

namespace shardc::rt::cpu {

// The ops and their graph names are the kernel contract's, shared with the
// CUDA backend.
using kernels::BinaryOp;
using kernels::binaryOpFromName;
using kernels::binaryOpName;
using kernels::ComparePredicate;
using kernels::comparePredicateFromName;
using kernels::comparePredicateName;
using kernels::isIntegerUnary;
using kernels::UnaryOp;
using kernels::unaryOpFromName;
using kernels::unaryOpName;

/// out = op(input); same shape and type. Sigmoid, silu and gelu use forms
/// that do not overflow for large |x|; gelu is 0.5 x (1 + erf(x / sqrt 2)),
/// gelu_tanh 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Status unary(UnaryOp op, const TensorView &input, const TensorView &out);

/// out (bool, input's shape) = isnan(input), for a float input.
Status isNaN(const TensorView &input, const TensorView &out);

/// out (bool, input's shape) = input is +inf (detectPositive) or -inf
/// (detectNegative), for a float input.
Status isInf(const TensorView &input, bool detectPositive, bool detectNegative,
             const TensorView &out);

/// out = lhs op rhs, broadcasting.
Status binary(BinaryOp op, const TensorView &lhs, const TensorView &rhs,
              const TensorView &out);

/// out (bool) = lhs predicate rhs, broadcasting. NaN compares false.
Status compare(ComparePredicate predicate, const TensorView &lhs,
               const TensorView &rhs, const TensorView &out);

/// out = condition ? trueValue : falseValue, all three broadcasting.
Status where(const TensorView &condition, const TensorView &trueValue,
             const TensorView &falseValue, const TensorView &out);

/// out = input converted to out.dtype; same shape.
///  - float -> integer truncates toward zero; NaN gives 0 and values beyond
///    the target's range saturate to its min/max (ONNX leaves these undefined;
///    saturating is what a checked conversion gives and never traps).
///  - integer -> integer wraps (two's complement); anything -> bool is x != 0
///    (NaN -> true); bool -> anything is 0/1.
///  - -> float types rounds once to nearest even, overflow to inf (also
///    F64/I64 -> F16/BF16, via round-to-odd, never double rounding).
/// In place is allowed when both types have the same size.
Status cast(const TensorView &input, const TensorView &out);

// Named forms of the common ops.
inline Status add(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Add, a, b, out);
}
inline Status sub(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Sub, a, b, out);
}
inline Status mul(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Mul, a, b, out);
}
inline Status div(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Div, a, b, out);
}
inline Status pow(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Pow, a, b, out);
}
inline Status maximum(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Max, a, b, out);
}
inline Status minimum(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Min, a, b, out);
}
inline Status logicalAnd(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::And, a, b, out);
}
inline Status logicalOr(const TensorView &a, const TensorView &b, const TensorView &out) {
  return binary(BinaryOp::Or, a, b, out);
}
inline Status logicalNot(const TensorView &input, const TensorView &out) {
  return unary(UnaryOp::Not, input, out);
}
inline Status relu(const TensorView &input, const TensorView &out) {
  return unary(UnaryOp::Relu, input, out);
}
inline Status gelu(const TensorView &input, const TensorView &out,
                   bool approximateTanh = false) {
  return unary(approximateTanh ? UnaryOp::GeluTanh : UnaryOp::Gelu, input, out);
}
inline Status silu(const TensorView &input, const TensorView &out) {
  return unary(UnaryOp::Silu, input, out);
}

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_ELEMENTWISE_H
