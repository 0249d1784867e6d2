//===- IndexSupport.h - What the gathers and scatters share (internal) -*- C++ -*-===//
//
// Internal to the evaluator: the operand checks every gather and scatter
// starts with, the shape rule and index check of the elementwise ones
// (GatherElements, ScatterElements), and their walk from an index position
// to the data element it names.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXSUPPORT_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXSUPPORT_H

#include "dialects/Graph/ConstEval/HostTensor.h"
#include "dialects/Graph/ConstEval/StridedLoop.h"

#include <optional>

namespace shardc::constfold::detail {

/// In this order: data, indices and (for a scatter) updates well-formed,
/// `axis` within data's rank (for the ops that have one), and indices of an
/// integer type ("<op> indices must have an integer type but got ...").
Status checkIndexOperands(const char *op, const HostTensor &data, const HostTensor &indices,
                          const HostTensor *updates, std::optional<int64_t> axis);

/// Whether indices have data's rank and are no larger than data in every dim
/// but `axis` (torch.gather's rule, which onnxruntime also follows).
bool fitsOutsideAxis(const HostTensor &indices, const HostTensor &data, int64_t axis);

/// Fails on the first index outside [-dim, dim) of data's dim `axis`:
/// "<op> index I is out of range for axis A of size D".
Status checkAxisIndices(const char *op, const HostTensor &indices, int64_t axis, int64_t dim);

/// Calls fn(i, target) for every position i of indices in row-major order,
/// target being the offset in data of position i with its `axis` coordinate
/// replaced by indices[i] (checked in range, negative counting from the end).
template <typename Fn>
void forEachAxisTarget(const Shape &dataShape, const HostTensor &indices,
                       int64_t axis, Fn &&fn) {
  // The offset of a position is its offset without the axis term (stride 0
  // there) plus index * axis stride.
  Shape dataStrides = rowMajorStrides(dataShape);
  const int64_t axisStride = dataStrides[size_t(axis)];
  const int64_t dim = dataShape[size_t(axis)];
  dataStrides[size_t(axis)] = 0;
  forEachStrided<1>(indices.shape, {dataStrides}, {0},
                    [&](int64_t i, const std::array<int64_t, 1> &at) {
                      int64_t index = indices.ints[size_t(i)];
                      if (index < 0)
                        index += dim;
                      fn(i, at[0] + index * axisStride);
                    });
}

} // namespace shardc::constfold::detail

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_INDEXSUPPORT_H
