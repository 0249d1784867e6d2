//===- Loss.h - the training loss appended to the model -------*- C++ -*-===//
//
// `--loss KIND:OUTPUT` names a model output and how it becomes the scalar
// the step minimizes (docs/training.md):
//   causal-lm     cross-entropy of OUTPUT[..., :-1, :] against labels[..., 1:]
//   cross-entropy the same without the shift
//   mse           mean of (OUTPUT - target)^2 over every element
//   output        OUTPUT itself, a scalar
// Token losses ignore labels of -100 and average over the counted tokens of
// the whole global batch: the sums are reductions over the batch dim, which
// the sharding rules split over dp, so every rank's loss is the global mean.
//
// A mean is built as a sum and its denominator: a step in micro-batches
// differentiates the sum and divides the gradients by the denominator, so
// that nothing the batch flows through needs the global count, which is
// known only once every micro-batch ran (docs/training.md).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_LOSS_H
#define SHARDC_PASSES_AUTODIFF_LOSS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace shardc::autodiff {

struct LossSpec {
  std::string kind;   ///< causal-lm, cross-entropy, mse or output
  std::string output; ///< the model output it is computed from
};

/// "causal-lm:logits" -> {causal-lm, logits}; an error names what is wrong.
llvm::Expected<LossSpec> parseLossSpec(llvm::StringRef text);

struct BuiltLoss {
  mlir::Value loss; ///< rank-0 float32, what the step reports
  /// The mean's sum (rank-0 float32): `loss` times `denominator`.
  mlir::Value objective;
  /// The mean's denominator (rank-0 float32), or null when `objective` is
  /// `loss`.
  mlir::Value denominator;
  /// Values whose gradient is known to vanish (the max subtracted for a
  /// stable log-sum-exp): the reverse sweep does not go through them.
  llvm::SmallVector<mlir::Value> constants;
};

/// Appends the loss to `main` (before its return), adding the `labels` or
/// `target` argument it needs; errors at the function name the output.
mlir::FailureOr<BuiltLoss> buildLoss(mlir::func::FuncOp main, const LossSpec &spec);

} // namespace shardc::autodiff

#endif
