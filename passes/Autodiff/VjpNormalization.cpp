//===- VjpNormalization.cpp - gradients of layer norm, RMS norm, softmax ---===//
//
// The norms recompute their statistics from the input (a reduction over the
// normalized dims, as the forward kernel does) rather than keep them: with
// x^ = (x - mean) * rstd and g = dy * scale,
//   layer norm: dx = rstd (g - mean(g) - x^ mean(g x^))
//   RMS norm:   dx = rstd (g - x^ mean(g x^))
// and the scale's gradient is dy x^ summed over the tokens.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;

SmallVector<int64_t> trailingAxes(Value value, int64_t first) {
  SmallVector<int64_t> axes;
  for (int64_t dim = first; dim < int64_t(shapeOf(value).size()); ++dim)
    axes.push_back(dim);
  return axes;
}

LogicalResult normVjp(VjpCall &call, Value x, Value scale, Value bias, int64_t axis, double epsilon,
                      bool centered) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  SmallVector<int64_t> axes = trailingAxes(x, axis);
  Value centeredX = centered ? g.sub(x, g.reduceMean(x, axes, true)) : x;
  Value variance = g.reduceMean(g.mul(centeredX, centeredX), axes, true);
  Value rstd = b.create<graph::RsqrtOp>(g.loc(), g.add(variance, g.scalarLike(x, epsilon)));
  Value normalized = g.mul(centeredX, rstd);
  Value dy = call.dy();
  if (call.needed[1])
    call.set(1, g.sumToShape(g.mul(dy, normalized), shapeOf(scale)));
  if (bias && call.needed[2])
    call.set(2, g.sumToShape(dy, shapeOf(bias)));
  if (call.needed[0]) {
    Value scaled = g.mul(dy, scale);
    Value projection = g.mul(normalized, g.reduceMean(g.mul(scaled, normalized), axes, true));
    Value inner = g.sub(scaled, projection);
    if (centered)
      inner = g.sub(inner, g.reduceMean(scaled, axes, true));
    call.set(0, g.mul(rstd, inner));
  }
  return success();
}

} // namespace

std::optional<LogicalResult> vjpNormalization(VjpCall &call) {
  GradientBuilder &g = call.build;
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(call.op)
      .Case([&](graph::LayerNormOp norm) {
        return normVjp(call, norm.getInput(), norm.getScale(), norm.getBias(), norm.getAxis(),
                       norm.getEpsilon().convertToDouble(), /*centered=*/true);
      })
      .Case([&](graph::RmsNormOp norm) {
        return normVjp(call, norm.getInput(), norm.getScale(), Value(), norm.getAxis(),
                       norm.getEpsilon().convertToDouble(), /*centered=*/false);
      })
      .Case([&](graph::SoftmaxOp softmax) {
        // y (dy - sum(dy y)) along the axis.
        Value y = call.result();
        int64_t axis = softmax.getAxis();
        Value dot = g.reduceSum(g.mul(call.dy(), y), {axis}, true);
        call.set(0, g.mul(y, g.sub(call.dy(), dot)));
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
