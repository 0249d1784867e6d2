//===- Unary.cpp - Elementwise unary ops ----------------------------------===//
#include "runtime/cpu/Elementwise.h"

#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/VectorMath.h"

#include <cmath>

namespace shardc::rt::cpu {

namespace {

using namespace detail;

/// out[i] = fn(in[i]) in the compute type. `cost` is a rough count of simple
/// operations per element, so that cheap ops on small tensors stay serial.
template <typename T, typename Fn>
void mapFloat(const TensorView &input, const TensorView &out, int64_t cost, Fn fn) {
  const T *in = input.as<const T>();
  T *result = out.as<T>();
  parallelFor(input.numel(), cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      result[i] = store<T>(fn(load(in[i])));
  });
}

template <typename T> void floatUnary(UnaryOp op, const TensorView &in, const TensorView &out) {
  using C = ComputeT<T>;
  auto run = [&](int64_t cost, auto fn) { mapFloat<T>(in, out, cost, fn); };
  switch (op) {
  case UnaryOp::Neg: run(1, [](C x) { return -x; }); break;
  case UnaryOp::Abs: run(1, [](C x) { return std::fabs(x); }); break;
  case UnaryOp::Sqrt: run(4, [](C x) { return std::sqrt(x); }); break;
  case UnaryOp::Rsqrt: run(4, [](C x) { return C(1) / std::sqrt(x); }); break;
  case UnaryOp::Reciprocal: run(2, [](C x) { return C(1) / x; }); break;
  case UnaryOp::Exp: run(16, [](C x) { return vmath::exp(x); }); break;
  case UnaryOp::Log: run(16, [](C x) { return std::log(x); }); break;
  case UnaryOp::Cos: run(16, [](C x) { return std::cos(x); }); break;
  case UnaryOp::Sin: run(16, [](C x) { return std::sin(x); }); break;
  case UnaryOp::Erf: run(16, [](C x) { return std::erf(x); }); break;
  case UnaryOp::Tanh: run(16, [](C x) { return std::tanh(x); }); break;
  case UnaryOp::Sigmoid: run(16, [](C x) { return vmath::sigmoid(x); }); break;
  // x < 0 rather than max(x, 0) so that NaN stays NaN.
  case UnaryOp::Relu: run(1, [](C x) { return x < 0 ? C(0) : x; }); break;
  // Both gelu forms avoid 1 + (something near -1) for negative x, which
  // would cancel to a few correct bits: 1 + erf(z) = erfc(-z), and
  // 1 + tanh(u) = 2 sigmoid(2u).
  case UnaryOp::Gelu:
    run(20, [](C x) {
      const C invSqrt2 = C(0.70710678118654752440);
      return C(0.5) * x * vmath::erfc(-x * invSqrt2);
    });
    break;
  case UnaryOp::GeluTanh:
    run(20, [](C x) {
      const C sqrt2OverPi = C(0.79788456080286535588);
      return x * vmath::sigmoid(C(2) * sqrt2OverPi * (x + C(0.044715) * x * x * x));
    });
    break;
  case UnaryOp::Silu: run(16, [](C x) { return x * vmath::sigmoid(x); }); break;
  case UnaryOp::Floor: run(1, [](C x) { return std::floor(x); }); break;
  case UnaryOp::Ceil: run(1, [](C x) { return std::ceil(x); }); break;
  // nearbyint in the default rounding mode sends halves to even (ONNX Round).
  case UnaryOp::Round: run(1, [](C x) { return std::nearbyint(x); }); break;
  // Every comparison is false for NaN, which therefore passes through.
  case UnaryOp::Sign:
    run(1, [](C x) { return x > 0 ? C(1) : x < 0 ? C(-1) : x == 0 ? C(0) : x; });
    break;
  case UnaryOp::Not: break; // rejected by the type check
  }
}

template <typename T> void intUnary(UnaryOp op, const TensorView &input, const TensorView &out) {
  const T *in = input.as<const T>();
  T *result = out.as<T>();
  parallelFor(input.numel(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T x = in[i];
      // Negation in uint64_t: -INT_MIN wraps to INT_MIN instead of being UB.
      const T negated = wrapTo<T>(uint64_t(0) - uint64_t(int64_t(x)));
      switch (op) {
      case UnaryOp::Neg: result[i] = negated; break;
      case UnaryOp::Abs: result[i] = x < 0 ? negated : x; break;
      case UnaryOp::Sign: result[i] = T(int(x > 0) - int(x < 0)); break;
      default: result[i] = x < 0 ? T(0) : x; break; // Relu
      }
    }
  });
}

} // namespace

Status unary(UnaryOp op, const TensorView &input, const TensorView &out) {
  const char *name = unaryOpName(op);
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));

  if (op == UnaryOp::Not) {
    if (input.dtype != DType::Bool)
      return fail(name, std::string("needs a bool input but got ") + dtypeName(input.dtype));
    const auto *in = input.as<const uint8_t>();
    auto *result = out.as<uint8_t>();
    parallelFor(input.numel(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        result[i] = in[i] == 0;
    });
    return Status::success();
  }
  if (dispatchFloat(input.dtype, [&](auto tag) { floatUnary<decltype(tag)>(op, input, out); }))
    return Status::success();
  const bool intOp = isIntegerUnary(op);
  if (intOp && dispatchInt(input.dtype, [&](auto tag) { intUnary<decltype(tag)>(op, input, out); }))
    return Status::success();
  return fail(name, std::string("needs a ") + (intOp ? "integer or float" : "float") +
                        " input but got " + dtypeName(input.dtype));
}

} // namespace shardc::rt::cpu
