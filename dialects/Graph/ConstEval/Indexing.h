//===- Indexing.h - Index-driven ops: gathers, scatters, Trilu --*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <optional>
#include <string_view>

namespace shardc::constfold {

/// ONNX Gather: result shape is data[:axis] + indices.shape + data[axis+1:].
/// Indices have an integer type; negative ones count from the end of the
/// axis; any index outside [-dim, dim) fails.
StatusOr<HostTensor> gather(const HostTensor &data, const HostTensor &indices, int64_t axis);

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
StatusOr<HostTensor> scatterElements(const HostTensor &data, const HostTensor &indices,
                                     const HostTensor &updates, int64_t axis,
                                     ScatterReduction reduction);

/// ONNX GatherElements: result[p] = data[p with p[axis] replaced by
/// indices[p]], of the indices' shape. indices (integer type, negative counts
/// from the end) have data's rank and are no larger than data outside `axis`
/// (torch.gather's rule, which onnxruntime also follows); an index outside
/// [-dim, dim) fails.
StatusOr<HostTensor> gatherElements(const HostTensor &data, const HostTensor &indices,
                                    int64_t axis);

/// ONNX GatherND: indices [B..., N..., k] (B the `batchDims` leading dims,
/// equal to data's) hold k-tuples into data's dims batchDims .. batchDims+k;
/// the result [B..., N..., data.shape[batchDims+k:]...] holds the slices they
/// name. 1 <= k <= rank - batchDims; negative indices count from the end of
/// their dim and any index outside [-dim, dim) fails.
StatusOr<HostTensor> gatherND(const HostTensor &data, const HostTensor &indices, int64_t batchDims);

/// ONNX ScatterND: a copy of data where the slice data[t] for every k-tuple t
/// of indices [N..., k] becomes updates[N...] (None) or is combined with it
/// elementwise (Add/Mul/Max/Min, as in scatterElements). Tuples are applied
/// in row-major order, so with None a repeated tuple takes the last slice.
/// updates must have the shape indices.shape[:-1] + data.shape[k:]; negative
/// indices count from the end. Bool data supports only None.
StatusOr<HostTensor> scatterND(const HostTensor &data, const HostTensor &indices,
                               const HostTensor &updates, ScatterReduction reduction);

/// ONNX Trilu on the last two dims of a rank >= 2 tensor (every leading dim
/// is a batch): keeps element (i, j) when j - i >= k (upper) or j - i <= k
/// (lower) and zeroes the rest. Any k is valid, also beyond the matrix.
StatusOr<HostTensor> trilu(const HostTensor &operand, int64_t k, bool upper);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXING_H
