//===- UniformSplit.h - the layer split Megatron-LM would make -*- C++ -*-===//
//
// The baseline a pipeline report compares its stages with: the model's
// layers spread evenly over the S = P*V stages (stage k holds layers
// [k*L/S, (k+1)*L/S)), what comes before the first layer (the embedding)
// on the first stage and what follows the last (final norm, LM head) on the
// last, as Megatron-LM cuts a transformer. An op outside every layer but
// between two (a shared op the exporter placed there) goes with the layer
// before it. Plain numbers, so that it is tested without MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_REPORT_UNIFORMSPLIT_H
#define SHARDC_COMPILER_REPORT_UNIFORMSPLIT_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace shardc::report {

/// One op of the program in order, with what it costs per micro-batch.
struct OpCost {
  double seconds = 0;
  std::optional<unsigned> layer;
};

/// The first layer stage `stage` holds in the uniform split of `layers`
/// layers over `stages` stages (stage k holds [first(k), first(k+1))).
size_t uniformFirstLayer(size_t stage, size_t layers, size_t stages);

/// Per stage, the seconds of the ops the uniform split gives it.
std::vector<double> uniformStageSeconds(llvm::ArrayRef<OpCost> ops, size_t layers,
                                        size_t stages);

} // namespace shardc::report

#endif
