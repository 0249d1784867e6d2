//===- MicrobatchInvariant.h - values every micro-batch computes alike -*- C++ -*-===//
//
// An op of a training step whose operands are weights (not gradient
// accumulators), constants and such ops only, and which writes nothing,
// computes the same on every micro-batch: the bf16 copy of an fp32 master
// weight, a tensor-parallel slice of a parameter. A pipeline stage
// recomputes such a value where another part of its program reads it
// rather than keep one copy per micro-batch in flight (a GPT-3 layer's
// weight casts would hold 450 MB per micro-batch), and the stage search
// does not count it among the activations a micro-batch keeps.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_MICROBATCHINVARIANT_H
#define SHARDC_PASSES_PIPELINE_MICROBATCHINVARIANT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

namespace shardc::pipeline {

class MicrobatchInvariance {
public:
  /// Whether `op` computes the same on every micro-batch (memoized).
  bool operator()(mlir::Operation *op);

private:
  llvm::DenseMap<mlir::Operation *, bool> known;
};

} // namespace shardc::pipeline

#endif // SHARDC_PASSES_PIPELINE_MICROBATCHINVARIANT_H
