//===- RaiseNorms.cpp - layer norm and RMS norm from primitives -----------===//
//
// Layer norm (torch < opset 17):      RMS norm (Llama):
//   m = mean(x); d = x - m              v = mean(x^2)
//   v = mean(d^2)                       n = x * rsqrt(v + eps)
//   n = d / sqrt(v + eps)               y = n * w
//   y = n * gamma + beta
// with the means over the trailing axes, and pow(d, 2) or d * d.
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISENORMSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// The first reduced axis when `mean` reduces exactly the trailing axes with
/// keepdims (the only layout the fused norms have).
std::optional<int64_t> trailingAxis(ReduceMeanOp mean) {
  ArrayRef<int64_t> axes = mean.getAxes();
  int64_t rank = mean.getInput().getType().getRank();
  if (!mean.getKeepdims() || axes.empty() || axes.back() != rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return std::nullopt;
  return axes.front();
}

/// `value` is x^2: pow(x, 2) or x * x.
Value squaredBase(Value value) {
  if (auto pow = producer<PowOp>(value); pow && isSplat(pow.getRhs(), 2.0))
    return pow.getLhs();
  if (auto mul = producer<MulOp>(value); mul && mul.getLhs() == mul.getRhs())
    return mul.getLhs();
  return {};
}

/// Matches `user` as `numerator / sqrt(variance + eps)` or
/// `numerator * rsqrt(variance + eps)`; returns eps.
std::optional<double> normalizedBy(Operation *user, Value numerator, Value variance) {
  auto epsilonOf = [&](Value shifted) -> std::optional<double> {
    auto add = producer<AddOp>(shifted);
    if (!add)
      return std::nullopt;
    Value other = otherOperand(add, variance);
    return other ? splatValue(other) : std::nullopt;
  };
  if (auto div = dyn_cast_or_null<DivOp>(user); div && div.getLhs() == numerator)
    if (auto sqrt = producer<SqrtOp>(div.getRhs()))
      return epsilonOf(sqrt.getInput());
  if (auto mul = dyn_cast_or_null<MulOp>(user))
    if (auto rsqrt = producer<RsqrtOp>(otherOperand(mul, numerator)))
      return epsilonOf(rsqrt.getInput());
  return std::nullopt;
}

/// Extends the normalized value with `* scale` and (if `withShift`) `+ shift`
/// when they follow and are per-feature (broadcast onto the normalized dims only).
struct Affine {
  Value result, scale, shift;
};
Affine affineAfter(Value normalized, int64_t axis, bool withShift) {
  Affine affine{normalized, {}, {}};
  auto normalizedShape = tensorType(normalized).getShape().drop_front(axis);
  auto perFeature = [&](Value v) {
    return v && broadcastsTo(tensorType(v).getShape(), normalizedShape);
  };
  if (auto mul = dyn_cast_or_null<MulOp>(soleUser(normalized));
      mul && perFeature(otherOperand(mul, normalized))) {
    affine.scale = otherOperand(mul, normalized);
    affine.result = mul;
  }
  if (auto add = dyn_cast_or_null<AddOp>(soleUser(affine.result));
      add && withShift && affine.scale && perFeature(otherOperand(add, affine.result))) {
    affine.shift = otherOperand(add, affine.result);
    affine.result = add;
  }
  return affine;
}

/// A scale of ones for a norm that had none.
Value onesLike(OpBuilder &builder, Location location, Value x, int64_t axis) {
  RankedTensorType type = tensorType(x);
  auto onesType = RankedTensorType::get(type.getShape().drop_front(axis), type.getElementType());
  return builder.create<ConstantOp>(
      location, DenseElementsAttr::get(onesType, builder.getFloatAttr(type.getElementType(), 1.0)));
}

void raiseLayerNorm(ReduceMeanOp mean) {
  std::optional<int64_t> axis = trailingAxis(mean);
  Value x = mean.getInput();
  if (!axis)
    return;
  for (Operation *user : mean->getUsers()) {
    auto sub = dyn_cast<SubOp>(user);
    if (!sub || sub.getLhs() != x || sub.getRhs() != mean)
      continue;
    Value centered = sub;
    // The variance: mean(centered^2) over the same axes.
    for (Operation *squareUser : centered.getUsers()) {
      Value square = squareUser->getResult(0);
      if (squaredBase(square) != centered || !square.hasOneUse())
        continue;
      auto variance = dyn_cast<ReduceMeanOp>(*square.getUsers().begin());
      if (!variance || variance.getAxes() != mean.getAxes() || !variance.getKeepdims())
        continue;
      for (Operation *normUser : centered.getUsers()) {
        std::optional<double> epsilon = normalizedBy(normUser, centered, variance);
        if (!epsilon)
          continue;
        Affine affine = affineAfter(normUser->getResult(0), *axis, /*withShift=*/true);
        OpBuilder builder(affine.result.getDefiningOp());
        Location location = affine.result.getLoc();
        Value scale = affine.scale ? affine.scale : onesLike(builder, location, x, *axis);
        auto norm = builder.create<LayerNormOp>(location, x, scale, affine.shift,
                                                builder.getI64IntegerAttr(*axis),
                                                builder.getF64FloatAttr(*epsilon));
        if (norm.getType() == affine.result.getType())
          affine.result.replaceAllUsesWith(norm.getResult());
        return;
      }
    }
  }
}

void raiseRmsNorm(ReduceMeanOp meanSquare) {
  std::optional<int64_t> axis = trailingAxis(meanSquare);
  Value x = squaredBase(meanSquare.getInput());
  if (!axis || !x)
    return;
  for (Operation *user : x.getUsers()) {
    std::optional<double> epsilon = normalizedBy(user, x, meanSquare);
    if (!epsilon)
      continue;
    Affine affine = affineAfter(user->getResult(0), *axis, /*withShift=*/false);
    Value result = affine.result;
    OpBuilder builder(result.getDefiningOp());
    Location location = result.getLoc();
    Value scale = affine.scale ? affine.scale : onesLike(builder, location, x, *axis);
    auto norm = builder.create<RmsNormOp>(location, x, scale, builder.getI64IntegerAttr(*axis),
                                          builder.getF64FloatAttr(*epsilon));
    if (norm.getType() == result.getType())
      result.replaceAllUsesWith(norm.getResult());
    return;
  }
}

struct RaiseNormsPass : shardc::graph::impl::RaiseNormsPassBase<RaiseNormsPass> {
  void runOnOperation() override {
    SmallVector<ReduceMeanOp> means;
    getOperation().walk([&](ReduceMeanOp mean) { means.push_back(mean); });
    for (ReduceMeanOp mean : means) {
      raiseLayerNorm(mean);
      raiseRmsNorm(mean);
    }
    eraseDeadOps(getOperation());
  }
};

} // namespace
