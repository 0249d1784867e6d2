//===- Unary.cpp - Elementwise unary ops ----------------------------------===//

#include "dialects/Graph/ConstEval/Elementwise.h"

#include "dialects/Graph/ConstEval/OpSupport.h"

#include <cmath>

namespace shardc::constfold {

const char *unaryOpName(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "neg";
  case UnaryOp::Abs: return "abs";
  case UnaryOp::Sqrt: return "sqrt";
  case UnaryOp::Rsqrt: return "rsqrt";
  case UnaryOp::Reciprocal: return "reciprocal";
  case UnaryOp::Exp: return "exp";
  case UnaryOp::Log: return "log";
  case UnaryOp::Cos: return "cos";
  case UnaryOp::Sin: return "sin";
  case UnaryOp::Erf: return "erf";
  case UnaryOp::Tanh: return "tanh";
  case UnaryOp::Sigmoid: return "sigmoid";
  case UnaryOp::Relu: return "relu";
  case UnaryOp::Not: return "not";
  case UnaryOp::Gelu: return "gelu";
  case UnaryOp::GeluTanh: return "gelu_tanh";
  case UnaryOp::Silu: return "silu";
  case UnaryOp::Floor: return "floor";
  case UnaryOp::Ceil: return "ceil";
  case UnaryOp::Round: return "round";
  case UnaryOp::Sign: return "sign";
  }
  return "?";
}

namespace {

// 1 / (1 + e^-x) overflows e^-x for very negative x; the mirrored form
// e^x / (1 + e^x) keeps every intermediate in range.
double sigmoid(double x) {
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double geluTanh(double x) {
  const double kSqrt2OverPi = 0.7978845608028654; // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

StatusOr<HostTensor> floatUnary(UnaryOp op, const HostTensor &in) {
  HostTensor out{in.type, in.shape, in.floats, {}};
  auto run = [&](auto fn) {
    for (double &v : out.floats)
      v = fn(v);
  };
  switch (op) {
  case UnaryOp::Neg: run([](double x) { return -x; }); break;
  case UnaryOp::Abs: run([](double x) { return std::fabs(x); }); break;
  case UnaryOp::Sqrt: run([](double x) { return std::sqrt(x); }); break;
  case UnaryOp::Rsqrt: run([](double x) { return 1.0 / std::sqrt(x); }); break;
  case UnaryOp::Reciprocal: run([](double x) { return 1.0 / x; }); break;
  case UnaryOp::Exp: run([](double x) { return std::exp(x); }); break;
  case UnaryOp::Log: run([](double x) { return std::log(x); }); break;
  case UnaryOp::Cos: run([](double x) { return std::cos(x); }); break;
  case UnaryOp::Sin: run([](double x) { return std::sin(x); }); break;
  case UnaryOp::Erf: run([](double x) { return std::erf(x); }); break;
  case UnaryOp::Tanh: run([](double x) { return std::tanh(x); }); break;
  case UnaryOp::Sigmoid: run(sigmoid); break;
  // x < 0 rather than max(x, 0) so that NaN stays NaN.
  case UnaryOp::Relu: run([](double x) { return x < 0 ? 0.0 : x; }); break;
  case UnaryOp::Gelu: run(gelu); break;
  case UnaryOp::GeluTanh: run(geluTanh); break;
  case UnaryOp::Silu: run([](double x) { return x * sigmoid(x); }); break;
  case UnaryOp::Floor: run([](double x) { return std::floor(x); }); break;
  case UnaryOp::Ceil: run([](double x) { return std::ceil(x); }); break;
  // nearbyint in the default rounding mode sends halves to even, as ONNX asks.
  case UnaryOp::Round: run([](double x) { return std::nearbyint(x); }); break;
  // Comparisons are false for NaN, which therefore passes through.
  case UnaryOp::Sign: run([](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }); break;
  case UnaryOp::Not:
    return Status::error(std::string("not needs a bool operand but got ") + typeName(in.type));
  }
  detail::roundAll(out.floats, out.type);
  return out;
}

StatusOr<HostTensor> intUnary(UnaryOp op, const HostTensor &in) {
  const ScalarType type = in.type;
  HostTensor out{type, in.shape, {}, in.ints};
  auto run = [&](auto fn) {
    for (int64_t &v : out.ints)
      v = fn(v);
  };
  switch (op) {
  case UnaryOp::Neg:
    run([type](int64_t x) { return wrapInt(type, uint64_t(0) - uint64_t(x)); });
    return out;
  case UnaryOp::Abs:
    run([type](int64_t x) { return x < 0 ? wrapInt(type, uint64_t(0) - uint64_t(x)) : x; });
    return out;
  case UnaryOp::Relu:
    run([](int64_t x) { return x < 0 ? int64_t(0) : x; });
    return out;
  case UnaryOp::Sign:
    run([](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); });
    return out;
  case UnaryOp::Floor:
  case UnaryOp::Ceil:
  case UnaryOp::Round:
    return out; // integers are already whole
  default:
    return Status::error(std::string(unaryOpName(op)) + " needs a float operand but got " +
                         typeName(type));
  }
}

} // namespace

StatusOr<HostTensor> unary(UnaryOp op, const HostTensor &operand) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  if (operand.type == ScalarType::Bool) {
    if (op != UnaryOp::Not)
      return Status::error(std::string(unaryOpName(op)) +
                           " needs an integer or float operand but got bool");
    HostTensor out{ScalarType::Bool, operand.shape, {}, operand.ints};
    for (int64_t &v : out.ints)
      v = v == 0;
    return out;
  }
  if (isFloat(operand.type))
    return floatUnary(op, operand);
  if (op == UnaryOp::Not)
    return Status::error(std::string("not needs a bool operand but got ") + typeName(operand.type));
  return intUnary(op, operand);
}

} // namespace shardc::constfold
