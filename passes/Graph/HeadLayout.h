//===- HeadLayout.h - attention operands with batch and heads apart -*- C++ -*-===//
//
// Exporters often fold the heads into the batch ([B*H, S, D]: torch's
// MultiheadAttention, GPT-NeoX's baddbmm, SDPA decompositions). Sharding
// cannot split the heads of such a dim: they are its minor factor, so a
// rank's heads are not one block. These helpers rebuild the [B, H, S, D]
// form from where the heads were folded in, so the attention op and the ops
// around it never hold the merged dim.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_GRAPH_HEADLAYOUT_H
#define SHARDC_PASSES_GRAPH_HEADLAYOUT_H

#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>

namespace shardc::graph {

/// The batch and head counts folded into dim 0 of a rank-3 value.
struct MergedHeads {
  int64_t batch;
  int64_t heads;
};

/// For `merged` = [B*H, S, D], a value [B, H, S, D] with the same elements.
/// Built from the op that folded the heads in when it is found (a reshape of
/// a [B, H, S, D] value, or a [S, B, H*D] sequence-major projection reshaped
/// to [S, B*H, D] and transposed); otherwise, when `hint` gives B and H, a
/// reshape of `merged`; null when neither applies.
mlir::Value unfoldHeads(mlir::OpBuilder &builder, mlir::Location location, mlir::Value merged,
                        std::optional<MergedHeads> hint);

/// Replaces every use of `merged` ([B*H, S, D]) by ops on `unfolded`
/// ([B, H, S, D]) that never form the merged dim when the users allow it (a
/// reshape; a transpose keeping dim 0 whole that only reshapes use), and by a
/// reshape of `unfolded` otherwise.
void replaceMergedHeads(mlir::OpBuilder &builder, mlir::Value merged, mlir::Value unfolded);

} // namespace shardc::graph

#endif
