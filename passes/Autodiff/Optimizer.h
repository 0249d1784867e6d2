//===- Optimizer.h - the weight update appended to the step ---*- C++ -*-===//
//
// torch.optim's SGD and AdamW, with their defaults, written as graph ops on
// each parameter and its gradient, ending in graph.assign of the parameter
// and of every optimizer state (docs/training.md names them as torch's
// state_dict does). Elementwise, so each rank updates the block of a
// parameter it holds, and the lowering fuses the update into one kernel.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_AUTODIFF_OPTIMIZER_H
#define SHARDC_PASSES_AUTODIFF_OPTIMIZER_H

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <string>
#include <utility>

namespace shardc::autodiff {

struct OptimizerSpec {
  std::string kind = "adamw"; ///< adamw or sgd
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.01; ///< AdamW's decoupled decay; SGD's L2 term
  /// Parameters of fewer than two dims (biases, norm scales) do not decay:
  /// Megatron-LM's default and transformers' Trainer's.
  bool noDecay1d = false;
  double momentum = 0;       ///< SGD only
  double gradClip = 0;       ///< max global L2 norm; 0: no clipping
};

struct Parameter {
  graph::WeightOp weight;
  mlir::Value gradient;
};

class LossScale;

/// The writes of the step, (storage, new value), emitted together after
/// every value they write is computed: no read of a parameter or state can
/// then follow its write, whatever order the later passes give the
/// computations.
using Writes = llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>;

/// A zero-initialised optimizer state named `name`, of `type`.
graph::WeightOp createState(mlir::OpBuilder &builder, mlir::Location location,
                            llvm::StringRef name, mlir::RankedTensorType type);

/// Appends the update of every parameter at `builder`'s insertion point and
/// returns the gradients' global L2 norm (before clipping), a rank-0 float32.
/// With `lossScale` (fp16) a step whose gradients are not finite writes
/// nothing new, and the scale is updated (LossScaling.h).
mlir::Value buildUpdate(mlir::OpBuilder &builder, mlir::Location location,
                        llvm::ArrayRef<Parameter> parameters, const OptimizerSpec &spec,
                        const LossScale *lossScale = nullptr);

} // namespace shardc::autodiff

#endif
