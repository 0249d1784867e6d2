//===- LossScaling.h - fp16 training's dynamic loss scale -------*- C++ -*-===//
//
// torch.amp.GradScaler's dynamic loss scaling, written as graph ops of the
// step (which is straight-line: a skipped step is a select, not a branch).
// The backward starts from the loss times the scale S, so that fp16
// gradients do not underflow; each parameter's float32 gradient is divided
// by S before the optimizer. A step whose gradients hold an inf or a NaN
// (their global norm is not finite) writes every parameter and optimizer
// state back unchanged, and S halves; after 2000 steps in a row without
// one, S doubles.
//
// The scale and the count of good steps are optimizer states
// (`shardc.loss_scale`, `shardc.loss_scale_growth_tracker`), zeros first as
// every state: a scale of 0, which halving never reaches, stands for the
// initial 65536.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_LOSSSCALING_H
#define SHARDC_PASSES_AUTODIFF_LOSSSCALING_H

#include "passes/Autodiff/GradientBuilder.h"
#include "passes/Autodiff/Optimizer.h"

namespace shardc::autodiff {

/// GradScaler's defaults.
constexpr double kInitialLossScale = 65536.0;
constexpr double kLossScaleGrowth = 2.0;
constexpr double kLossScaleBackoff = 0.5;
constexpr double kLossScaleGrowthInterval = 2000;

class LossScale {
public:
  /// Reads this step's scale (a rank-0 float32) at `g`'s insertion point.
  explicit LossScale(GradientBuilder &g);

  /// The loss scale this step's backward starts from.
  mlir::Value scale() const { return current; }

  /// Makes every write of `writes` keep its storage's value unless the
  /// gradients, whose global norm is `norm`, are finite, and appends the
  /// writes of the scale and of the count of good steps.
  void guard(GradientBuilder &g, mlir::Value norm, Writes &writes) const;

private:
  mlir::Value scaleState, growthTracker; /// the states (graph.weight)
  mlir::Value current;
};

} // namespace shardc::autodiff

#endif
