//===- LossScaling.cpp - fp16 training's dynamic loss scale ---------------===//
#include "passes/Autodiff/LossScaling.h"

#include <cmath>

using namespace mlir;

namespace shardc::autodiff {

LossScale::LossScale(GradientBuilder &g) {
  auto scalar = RankedTensorType::get({}, g.b().getF32Type());
  scaleState = createState(g.b(), g.loc(), "shardc.loss_scale", scalar);
  growthTracker = createState(g.b(), g.loc(), "shardc.loss_scale_growth_tracker", scalar);
  Value unset = g.compare(graph::ComparePredicate::eq, scaleState, g.scalarLike(scaleState, 0));
  current = g.where(unset, g.scalarLike(scaleState, kInitialLossScale), scaleState);
}

void LossScale::guard(GradientBuilder &g, Value norm, Writes &writes) const {
  // NaN < inf and inf < inf are both false.
  Value finite = g.compare(graph::ComparePredicate::lt, norm, g.scalarLike(norm, INFINITY));
  for (auto &[storage, value] : writes)
    value = g.where(finite, value, storage);
  // GradScaler.update: a non-finite step backs off and restarts the count;
  // the growth interval's good step grows the scale and restarts it.
  Value good = g.add(growthTracker, g.scalarLike(growthTracker, 1));
  Value grows =
      g.compare(graph::ComparePredicate::ge, good, g.scalarLike(good, kLossScaleGrowthInterval));
  Value zero = g.scalarLike(good, 0);
  Value grown = g.where(grows, g.scale(current, kLossScaleGrowth), current);
  writes.push_back({scaleState, g.where(finite, grown, g.scale(current, kLossScaleBackoff))});
  writes.push_back({growthTracker, g.where(finite, g.where(grows, zero, good), zero)});
}

} // namespace shardc::autodiff
