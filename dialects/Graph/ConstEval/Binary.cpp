//===- Binary.cpp - Broadcasting binary ops -------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

#include <algorithm>
#include <cmath>

namespace shardc::constfold {

const char *binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "add";
  case BinaryOp::Sub: return "sub";
  case BinaryOp::Mul: return "mul";
  case BinaryOp::Div: return "div";
  case BinaryOp::Pow: return "pow";
  case BinaryOp::Max: return "max";
  case BinaryOp::Min: return "min";
  case BinaryOp::Mod: return "mod";
  case BinaryOp::FMod: return "fmod";
  case BinaryOp::And: return "and";
  case BinaryOp::Or: return "or";
  case BinaryOp::Xor: return "xor";
  case BinaryOp::Equal: return "equal";
  case BinaryOp::Less: return "less";
  case BinaryOp::LessEqual: return "less_equal";
  case BinaryOp::Greater: return "greater";
  case BinaryOp::GreaterEqual: return "greater_equal";
  }
  return "?";
}

namespace {

using detail::forEachStrided;

bool isComparison(BinaryOp op) {
  return op == BinaryOp::Equal || op == BinaryOp::Less ||
         op == BinaryOp::LessEqual || op == BinaryOp::Greater ||
         op == BinaryOp::GreaterEqual;
}

bool isLogical(BinaryOp op) {
  return op == BinaryOp::And || op == BinaryOp::Or || op == BinaryOp::Xor;
}

/// out[i] = fn(l[...], r[...]) over the broadcast result shape.
template <typename L, typename R, typename O, typename Fn>
void zip(const HostTensor &lhs, const std::vector<L> &l, const HostTensor &rhs,
         const std::vector<R> &r, HostTensor &result, std::vector<O> &out,
         Fn fn) {
  forEachStrided<2>(result.shape,
                    {broadcastStrides(lhs.shape, result.shape),
                     broadcastStrides(rhs.shape, result.shape)},
                    {0, 0}, [&](int64_t i, const std::array<int64_t, 2> &at) {
                      out[size_t(i)] = fn(l[size_t(at[0])], r[size_t(at[1])]);
                    });
}

/// The type of the result, or why the operand types do not suit `op`.
StatusOr<ScalarType> resultType(BinaryOp op, ScalarType l, ScalarType r) {
  std::string name = binaryOpName(op);
  auto mismatch = [&](const char *need) {
    return Status::error(name + " needs " + need + " but got " + typeName(l) + " and " +
                         typeName(r));
  };
  if (isLogical(op)) {
    if (l != ScalarType::Bool || r != ScalarType::Bool)
      return mismatch("bool operands");
    return ScalarType::Bool;
  }
  if (isComparison(op)) {
    if (l != r)
      return mismatch("operands of the same element type");
    return ScalarType::Bool;
  }
  if (op == BinaryOp::Pow) {
    if (l == ScalarType::Bool || r == ScalarType::Bool)
      return mismatch("integer or float operands");
    return l;
  }
  if (l != r || l == ScalarType::Bool)
    return mismatch("integer or float operands of the same element type");
  return l;
}

/// Python's float %: the truncated remainder moved into the divisor's sign.
/// This gives ONNX Mod-28's special cases: a zero takes the divisor's sign,
/// and x % +-inf is x when the signs agree and the infinity otherwise.
double flooredMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r == 0)
    return std::copysign(0.0, b);
  if ((r < 0) != (b < 0))
    r += b;
  return r;
}

void floatArithmetic(BinaryOp op, const HostTensor &lhs, const HostTensor &rhs,
                     HostTensor &out) {
  auto run = [&](auto fn) {
    zip(lhs, lhs.floats, rhs, rhs.floats, out, out.floats, fn);
  };
  switch (op) {
  case BinaryOp::Add: run([](double a, double b) { return a + b; }); break;
  case BinaryOp::Sub: run([](double a, double b) { return a - b; }); break;
  case BinaryOp::Mul: run([](double a, double b) { return a * b; }); break;
  case BinaryOp::Div: run([](double a, double b) { return a / b; }); break;
  case BinaryOp::Mod: run(flooredMod); break;
  case BinaryOp::FMod: run([](double a, double b) { return std::fmod(a, b); }); break;
  // NaN wins, like numpy.maximum/minimum; std::max would depend on the order.
  case BinaryOp::Max:
    run([](double a, double b) { return std::isnan(a) || a >= b ? a : b; });
    break;
  case BinaryOp::Min:
    run([](double a, double b) { return std::isnan(a) || a <= b ? a : b; });
    break;
  default: break;
  }
  detail::roundAll(out.floats, out.type);
}

StatusOr<HostTensor> intArithmetic(BinaryOp op, const HostTensor &lhs, const HostTensor &rhs,
                                   HostTensor &out) {
  const ScalarType type = out.type;
  // Computing in uint64_t makes overflow defined; wrapInt then keeps the bits
  // the element type holds, which is the same as wrapping at its own width.
  auto run = [&](auto fn) {
    zip(lhs, lhs.ints, rhs, rhs.ints, out, out.ints, fn);
  };
  switch (op) {
  case BinaryOp::Add:
    run([type](int64_t a, int64_t b) { return wrapInt(type, uint64_t(a) + uint64_t(b)); });
    break;
  case BinaryOp::Sub:
    run([type](int64_t a, int64_t b) { return wrapInt(type, uint64_t(a) - uint64_t(b)); });
    break;
  case BinaryOp::Mul:
    run([type](int64_t a, int64_t b) { return wrapInt(type, uint64_t(a) * uint64_t(b)); });
    break;
  case BinaryOp::Div:
    // Every divisor element is used when the result is not empty.
    if (out.numElements() > 0 &&
        std::find(rhs.ints.begin(), rhs.ints.end(), 0) != rhs.ints.end())
      return Status::error("integer division by zero");
    run([type](int64_t a, int64_t b) {
      // INT64_MIN / -1 overflows (undefined in C++): negate with wrapping.
      if (b == -1)
        return wrapInt(type, uint64_t(0) - uint64_t(a));
      return wrapInt(type, uint64_t(a / b)); // '/' truncates toward zero
    });
    break;
  case BinaryOp::Mod:
  case BinaryOp::FMod: {
    if (out.numElements() > 0 &&
        std::find(rhs.ints.begin(), rhs.ints.end(), 0) != rhs.ints.end())
      return Status::error("integer division by zero");
    const bool floored = op == BinaryOp::Mod;
    run([floored](int64_t a, int64_t b) {
      // INT64_MIN % -1 overflows in C++; the remainder is 0.
      int64_t r = b == -1 ? 0 : a % b; // '%' truncates: the dividend's sign
      if (floored && r != 0 && (r < 0) != (b < 0))
        r += b;
      return r;
    });
    break;
  }
  case BinaryOp::Max: run([](int64_t a, int64_t b) { return std::max(a, b); }); break;
  case BinaryOp::Min: run([](int64_t a, int64_t b) { return std::min(a, b); }); break;
  default: break;
  }
  return std::move(out);
}

template <typename T>
void compare(BinaryOp op, const HostTensor &lhs, const std::vector<T> &l,
             const HostTensor &rhs, const std::vector<T> &r, HostTensor &out) {
  auto run = [&](auto fn) { zip(lhs, l, rhs, r, out, out.ints, fn); };
  switch (op) {
  case BinaryOp::Equal: run([](T a, T b) -> int64_t { return a == b; }); break;
  case BinaryOp::Less: run([](T a, T b) -> int64_t { return a < b; }); break;
  case BinaryOp::LessEqual: run([](T a, T b) -> int64_t { return a <= b; }); break;
  case BinaryOp::Greater: run([](T a, T b) -> int64_t { return a > b; }); break;
  case BinaryOp::GreaterEqual: run([](T a, T b) -> int64_t { return a >= b; }); break;
  default: break;
  }
}

void logical(BinaryOp op, const HostTensor &lhs, const HostTensor &rhs,
             HostTensor &out) {
  auto run = [&](auto fn) {
    zip(lhs, lhs.ints, rhs, rhs.ints, out, out.ints, fn);
  };
  switch (op) {
  case BinaryOp::And: run([](int64_t a, int64_t b) -> int64_t { return a && b; }); break;
  case BinaryOp::Or: run([](int64_t a, int64_t b) -> int64_t { return a || b; }); break;
  case BinaryOp::Xor: run([](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); }); break;
  default: break;
  }
}

/// base ** exponent for integers, exact modulo 2^64 by binary exponentiation.
/// A negative exponent means 1 / base^n truncated toward zero, like a C cast of
/// std::pow; nullopt for 0 ** negative.
std::optional<int64_t> intPow(ScalarType type, int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 0)
      return std::nullopt;
    if (base == 1)
      return 1;
    if (base == -1)
      return exponent % 2 == 0 ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, factor = uint64_t(base);
  for (auto e = uint64_t(exponent); e; e >>= 1) {
    if (e & 1)
      result *= factor;
    factor *= factor;
  }
  return wrapInt(type, result);
}

StatusOr<HostTensor> power(const HostTensor &base, const HostTensor &exponent, HostTensor &out) {
  if (isFloat(base.type)) {
    auto pow = [](double b, auto e) { return std::pow(b, double(e)); };
    if (isFloat(exponent.type))
      zip(base, base.floats, exponent, exponent.floats, out, out.floats, pow);
    else
      zip(base, base.floats, exponent, exponent.ints, out, out.floats, pow);
    detail::roundAll(out.floats, out.type);
    return std::move(out);
  }
  const ScalarType type = out.type;
  bool failed = false;
  if (isFloat(exponent.type)) {
    zip(base, base.ints, exponent, exponent.floats, out, out.ints,
        [&](int64_t b, double e) -> int64_t {
          std::optional<int64_t> v = detail::truncateToInt(type, std::pow(double(b), e));
          failed |= !v;
          return v.value_or(0);
        });
    if (failed)
      return Status::error(std::string("pow result is NaN, infinite or out of range for ") +
                           typeName(type));
    return std::move(out);
  }
  zip(base, base.ints, exponent, exponent.ints, out, out.ints,
      [&](int64_t b, int64_t e) -> int64_t {
        std::optional<int64_t> v = intPow(type, b, e);
        failed |= !v;
        return v.value_or(0);
      });
  if (failed)
    return Status::error("integer pow of 0 to a negative exponent");
  return std::move(out);
}

} // namespace

StatusOr<HostTensor> binary(BinaryOp op, const HostTensor &lhs, const HostTensor &rhs) {
  if (Status status = detail::checkOperand(lhs, "lhs"); !status)
    return status;
  if (Status status = detail::checkOperand(rhs, "rhs"); !status)
    return status;
  StatusOr<ScalarType> type = resultType(op, lhs.type, rhs.type);
  if (!type)
    return Status::error(type.message());
  StatusOr<Shape> shape = broadcastShapes(lhs.shape, rhs.shape);
  if (!shape)
    return Status::error(shape.message());
  StatusOr<HostTensor> out = detail::allocate(*type, *shape);
  if (!out)
    return out;

  if (op == BinaryOp::Pow)
    return power(lhs, rhs, *out);
  if (isLogical(op)) {
    logical(op, lhs, rhs, *out);
    return out;
  }
  if (isComparison(op)) {
    if (isFloat(lhs.type))
      compare(op, lhs, lhs.floats, rhs, rhs.floats, *out);
    else
      compare(op, lhs, lhs.ints, rhs, rhs.ints, *out);
    return out;
  }
  if (isFloat(lhs.type)) {
    floatArithmetic(op, lhs, rhs, *out);
    return out;
  }
  return intArithmetic(op, lhs, rhs, *out);
}

} // namespace shardc::constfold
