//===- VjpElementwise.cpp - gradients of elementwise ops --------------------===//
//
// Binary ops broadcast, so each operand's gradient is summed back to its own
// shape. Unary rules reuse the op's result where the derivative is a function
// of it (exp, tanh, sigmoid, rsqrt), which costs no recomputation.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;
using graph::tensorType;

/// Sets the gradient of each operand of a binary op from its full-shape
/// gradient, summed over the dims it was broadcast along.
void setBinary(VjpCall &call, Value lhsGrad, Value rhsGrad) {
  GradientBuilder &g = call.build;
  if (lhsGrad)
    call.set(0, g.sumToShape(lhsGrad, shapeOf(call.operand(0))));
  if (rhsGrad)
    call.set(1, g.sumToShape(rhsGrad, shapeOf(call.operand(1))));
}

/// d gelu(x) / dx, exact (erf) or for the tanh approximation.
Value geluDerivative(GradientBuilder &g, Value x, bool tanhForm) {
  OpBuilder &b = g.b();
  Location loc = g.loc();
  if (!tanhForm) {
    // Phi(x) + x * phi(x), phi the standard normal density.
    Value cdf = g.scale(g.add(b.create<graph::ErfOp>(loc, g.scale(x, M_SQRT1_2)), g.scalarLike(x, 1)),
                        0.5);
    Value density = g.scale(b.create<graph::ExpOp>(loc, g.scale(g.mul(x, x), -0.5)),
                            1.0 / std::sqrt(2 * M_PI));
    return g.add(cdf, g.mul(x, density));
  }
  // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3k x^2), t = tanh(c (x + k x^3)).
  const double c = std::sqrt(2 / M_PI), k = 0.044715;
  Value square = g.mul(x, x);
  Value inner = g.scale(g.add(x, g.scale(g.mul(square, x), k)), c);
  Value t = b.create<graph::TanhOp>(loc, inner);
  Value one = g.scalarLike(x, 1);
  Value slope = g.scale(g.add(one, g.scale(square, 3 * k)), c);
  Value sech2 = g.sub(one, g.mul(t, t));
  return g.add(g.scale(g.add(one, t), 0.5), g.scale(g.mul(g.mul(x, sech2), slope), 0.5));
}

} // namespace

std::optional<LogicalResult> vjpElementwise(VjpCall &call) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  Location loc = g.loc();
  Operation *op = call.op;
  auto unary = [&](Value derivative) -> LogicalResult {
    call.set(0, g.mul(call.dy(), derivative));
    return success();
  };
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](graph::AddOp) {
        setBinary(call, call.dy(), call.dy());
        return success();
      })
      .Case([&](graph::SubOp) {
        setBinary(call, call.dy(), call.needed[1] ? g.neg(call.dy()) : Value());
        return success();
      })
      .Case([&](graph::MulOp) {
        setBinary(call, call.needed[0] ? g.mul(call.dy(), call.operand(1)) : Value(),
                  call.needed[1] ? g.mul(call.dy(), call.operand(0)) : Value());
        return success();
      })
      .Case([&](graph::DivOp) {
        // d(a/b)/db = -(a/b)/b.
        Value rhsGrad;
        if (call.needed[1])
          rhsGrad = g.neg(g.div(g.mul(call.dy(), call.result()), call.operand(1)));
        setBinary(call, call.needed[0] ? g.div(call.dy(), call.operand(1)) : Value(), rhsGrad);
        return success();
      })
      .Case([&](graph::PowOp) -> LogicalResult {
        if (call.needed[1])
          return call.refuse("the exponent depends on a trained weight");
        // p x^(p-1), with the exponent as given (a constant in practice).
        Value exponent = call.operand(1);
        Value lowered = g.sub(exponent, g.scalarLike(exponent, 1));
        Value power = b.create<graph::PowOp>(loc, call.operand(0), lowered);
        setBinary(call, g.mul(call.dy(), g.mul(exponent, power)), Value());
        return success();
      })
      .Case([&](graph::MaxOp) {
        // The larger operand takes the gradient; ties go to the first.
        Value first = g.compare(graph::ComparePredicate::ge, call.operand(0), call.operand(1));
        Value zero = g.scalarLike(call.dy(), 0);
        setBinary(call, g.where(first, call.dy(), zero), g.where(first, zero, call.dy()));
        return success();
      })
      .Case([&](graph::MinOp) {
        Value first = g.compare(graph::ComparePredicate::le, call.operand(0), call.operand(1));
        Value zero = g.scalarLike(call.dy(), 0);
        setBinary(call, g.where(first, call.dy(), zero), g.where(first, zero, call.dy()));
        return success();
      })
      .Case([&](graph::WhereOp) {
        Value zero = g.scalarLike(call.dy(), 0);
        Value condition = call.operand(0);
        if (call.needed[1])
          call.set(1, g.sumToShape(g.where(condition, call.dy(), zero), shapeOf(call.operand(1))));
        if (call.needed[2])
          call.set(2, g.sumToShape(g.where(condition, zero, call.dy()), shapeOf(call.operand(2))));
        return success();
      })
      .Case([&](graph::NegOp) {
        call.set(0, g.neg(call.dy()));
        return success();
      })
      .Case([&](graph::ExpOp) { return unary(call.result()); })
      .Case([&](graph::LogOp) {
        call.set(0, g.div(call.dy(), call.operand(0)));
        return success();
      })
      .Case([&](graph::SqrtOp) {
        call.set(0, g.div(g.scale(call.dy(), 0.5), call.result()));
        return success();
      })
      .Case([&](graph::RsqrtOp) {
        Value y = call.result();
        return unary(g.scale(g.mul(g.mul(y, y), y), -0.5));
      })
      .Case([&](graph::ReciprocalOp) {
        Value y = call.result();
        return unary(g.neg(g.mul(y, y)));
      })
      .Case([&](graph::TanhOp) {
        Value y = call.result();
        return unary(g.sub(g.scalarLike(y, 1), g.mul(y, y)));
      })
      .Case([&](graph::SigmoidOp) {
        Value y = call.result();
        return unary(g.mul(y, g.sub(g.scalarLike(y, 1), y)));
      })
      .Case([&](graph::SiluOp) {
        // s (1 + x (1 - s)), s = sigmoid(x).
        Value x = call.operand(0);
        Value s = b.create<graph::SigmoidOp>(loc, x);
        Value one = g.scalarLike(x, 1);
        return unary(g.mul(s, g.add(one, g.mul(x, g.sub(one, s)))));
      })
      .Case([&](graph::GeluOp gelu) {
        return unary(geluDerivative(g, call.operand(0), gelu.getApproximateTanh()));
      })
      .Case([&](graph::ErfOp) {
        Value x = call.operand(0);
        Value density = b.create<graph::ExpOp>(loc, g.neg(g.mul(x, x)));
        return unary(g.scale(density, 2 / std::sqrt(M_PI)));
      })
      .Case([&](graph::ReluOp) {
        Value x = call.operand(0);
        Value positive = g.compare(graph::ComparePredicate::gt, x, g.scalarLike(x, 0));
        call.set(0, g.where(positive, call.dy(), g.scalarLike(x, 0)));
        return success();
      })
      .Case([&](graph::AbsOp) {
        return unary(b.create<graph::SignOp>(loc, call.operand(0)));
      })
      .Case([&](graph::CastOp) {
        // Only a float operand can be needed (activity flows through floats).
        call.set(0, b.create<graph::CastOp>(loc, call.operand(0).getType(), call.dy()));
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
