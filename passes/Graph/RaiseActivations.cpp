//===- RaiseActivations.cpp - GELU, SiLU and rsqrt from primitives --------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEACTIVATIONSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// Completes a GELU match once its core `inner` = erf(...) or tanh(...) is
/// found: 0.5 * x * (1 + inner), with the factors in any order and grouping.
bool raiseGeluFromCore(Value inner, Value x, bool tanhForm) {
  auto onePlus = dyn_cast_or_null<AddOp>(soleUser(inner));
  if (!onePlus || !isSplat(otherOperand(onePlus, inner), 1.0))
    return false;
  // Climb the chain of multiplications above 1 + inner, trying the lowest root first.
  Value root = onePlus.getResult();
  while (auto mul = dyn_cast_or_null<MulOp>(soleUser(root))) {
    root = mul.getResult();
    Product product = flattenProduct(root);
    bool factorsMatch = product.factors.size() == 2 &&
                        llvm::is_contained(product.factors, x) &&
                        llvm::is_contained(product.factors, onePlus.getResult());
    if (!factorsMatch || std::abs(product.scale - 0.5) > 1e-6)
      continue;
    OpBuilder builder(root.getDefiningOp());
    auto gelu = builder.create<GeluOp>(root.getLoc(), x, tanhForm);
    return replaceIfSameType(root, gelu);
  }
  return false;
}

/// erf(x / sqrt(2)) at the heart of exact GELU.
void raiseErfGelu(ErfOp erf) {
  Product argument = flattenProduct(erf.getInput());
  if (argument.factors.size() == 1 && std::abs(argument.scale - M_SQRT1_2) < 1e-4)
    raiseGeluFromCore(erf, argument.factors.front(), /*tanhForm=*/false);
}

/// True when `cubic` is 0.044715 * x^3, spelled with pow or as x * x * x.
bool isCubicTerm(Value cubic, Value x) {
  Product product = flattenProduct(cubic);
  if (std::abs(product.scale - 0.044715) > 1e-6)
    return false;
  if (product.factors.size() == 3)
    return llvm::all_of(product.factors, [&](Value f) { return f == x; });
  if (product.factors.size() != 1)
    return false;
  auto pow = producer<PowOp>(product.factors.front());
  return pow && pow.getLhs() == x && isSplat(pow.getRhs(), 3.0);
}

/// tanh(sqrt(2/pi) * (x + 0.044715 x^3)) at the heart of tanh-approximated GELU.
void raiseTanhGelu(TanhOp tanh) {
  Product argument = flattenProduct(tanh.getInput());
  if (argument.factors.size() != 1 || std::abs(argument.scale - std::sqrt(2.0 / M_PI)) > 1e-4)
    return;
  auto sum = producer<AddOp>(argument.factors.front());
  if (!sum)
    return;
  for (auto [x, cubic] : {std::pair(sum.getLhs(), sum.getRhs()), std::pair(sum.getRhs(), sum.getLhs())})
    if (isCubicTerm(cubic, x) && raiseGeluFromCore(tanh, x, /*tanhForm=*/true))
      return;
}

/// x * sigmoid(x).
void raiseSilu(SigmoidOp sigmoid) {
  Value x = sigmoid.getInput();
  for (Operation *user : llvm::make_early_inc_range(sigmoid->getUsers())) {
    auto mul = dyn_cast<MulOp>(user);
    if (!mul || otherOperand(mul, sigmoid) != x)
      continue;
    OpBuilder builder(mul);
    replaceIfSameType(mul, builder.create<SiluOp>(mul.getLoc(), x));
  }
}

/// 1 / sqrt(y) and reciprocal(sqrt(y)).
void raiseRsqrt(Operation *op) {
  Value root = op->getResult(0), denominator;
  if (auto div = dyn_cast<DivOp>(op); div && isSplat(div.getLhs(), 1.0))
    denominator = div.getRhs();
  else if (auto reciprocal = dyn_cast<ReciprocalOp>(op))
    denominator = reciprocal.getInput();
  auto sqrt = producer<SqrtOp>(denominator);
  if (!sqrt)
    return;
  OpBuilder builder(op);
  replaceIfSameType(root, builder.create<RsqrtOp>(op->getLoc(), sqrt.getInput()));
}

struct RaiseActivationsPass
    : shardc::graph::impl::RaiseActivationsPassBase<RaiseActivationsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> anchors;
    getOperation().walk([&](Operation *op) {
      if (isa<ErfOp, TanhOp, SigmoidOp, DivOp, ReciprocalOp>(op))
        anchors.push_back(op);
    });
    // Replaced primitives stay (dead) until the sweep, so no anchor dangles.
    for (Operation *op : anchors) {
      if (auto erf = dyn_cast<ErfOp>(op))
        raiseErfGelu(erf);
      else if (auto tanh = dyn_cast<TanhOp>(op))
        raiseTanhGelu(tanh);
      else if (auto sigmoid = dyn_cast<SigmoidOp>(op))
        raiseSilu(sigmoid);
      else
        raiseRsqrt(op);
    }
    eraseDeadOps(getOperation());
  }
};

} // namespace
