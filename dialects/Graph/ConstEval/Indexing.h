//===- Indexing.h - Index-driven ops: Gather, ScatterElements, Trilu -*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <optional>
#include <string_view>

namespace shardc::constfold {

/// ONNX Gather: result shape is data[:axis] + indices.shape + data[axis+1:].
/// Indices have an integer type; negative ones count from the end of the
/// axis; any index outside [-dim, dim) fails.
Result<HostTensor> gather(const HostTensor &data, const HostTensor &indices,
                          int64_t axis);

enum class ScatterReduction { None, Add, Mul, Max, Min };

/// Parses ONNX's `reduction` attribute ("none", "add", "mul", "max", "min").
std::optional<ScatterReduction> parseScatterReduction(std::string_view name);

/// ONNX ScatterElements: a copy of data where, for every position p of
/// indices, the element at p with p[axis] replaced by indices[p] becomes
/// updates[p] (None) or is combined with it (Add/Mul/Max/Min, evaluated and
/// rounded/wrapped in the element type). indices (integer type, negative
/// counts from the end) and updates have one shape, of data's rank and no
/// larger than data in any dim but `axis`. Positions are applied in row-major
/// order, so with None a duplicated target takes the last update (ONNX leaves
/// that undefined). Bool data supports only None.
Result<HostTensor> scatterElements(const HostTensor &data,
                                   const HostTensor &indices,
                                   const HostTensor &updates, int64_t axis,
                                   ScatterReduction reduction);

/// ONNX Trilu on the last two dims of a rank >= 2 tensor (every leading dim
/// is a batch): keeps element (i, j) when j - i >= k (upper) or j - i <= k
/// (lower) and zeroes the rest. Any k is valid, also beyond the matrix.
Result<HostTensor> trilu(const HostTensor &operand, int64_t k, bool upper);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H
