//===- StridedLoop.h - The index walk shared by the ops (internal) -*- C++ -*-===//
//
// Internal to the evaluator. Broadcasting, transposes, slices, expands,
// reductions and batched matmuls are all "walk an index space in row-major
// order and read K operands at strided offsets" (a stride of 0 broadcasts, a
// permuted stride transposes, a negative one walks backwards). Writing that
// walk once keeps each op to its own logic, and updating the offsets
// incrementally makes it cost O(K) per element instead of O(rank * K).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_STRIDEDLOOP_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_STRIDEDLOOP_H

#include "dialects/Graph/ConstEval/Shape.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace shardc::constfold::detail {

/// Calls fn(linear, offsets) for every index of `shape` in row-major order,
/// where `linear` counts 0, 1, 2, ... and
///   offsets[k] = bases[k] + sum_d index[d] * strides[k][d].
/// Each strides[k] has shape.size() entries. Nothing is called when a dim is 0;
/// a scalar (empty shape) is visited once.
template <std::size_t K, typename Fn>
void forEachStrided(const Shape &shape, const std::array<Shape, K> &strides,
                    std::array<int64_t, K> bases, Fn &&fn) {
  for (int64_t dim : shape)
    if (dim == 0)
      return;
  if (shape.empty()) {
    fn(int64_t(0), bases);
    return;
  }
  const std::size_t innerDim = shape.size() - 1;
  const int64_t innerSize = shape[innerDim];
  std::array<int64_t, K> innerStride;
  for (std::size_t k = 0; k < K; ++k)
    innerStride[k] = strides[k][innerDim];

  Shape index(shape.size(), 0); // only the outer dims are used
  int64_t linear = 0;
  for (;;) {
    // The innermost dim as a tight loop.
    std::array<int64_t, K> offsets = bases;
    for (int64_t i = 0; i < innerSize; ++i) {
      fn(linear++, static_cast<const std::array<int64_t, K> &>(offsets));
      for (std::size_t k = 0; k < K; ++k)
        offsets[k] += innerStride[k];
    }
    // Carry into the outer dims like an odometer.
    std::size_t dim = innerDim;
    for (;;) {
      if (dim == 0)
        return;
      --dim;
      for (std::size_t k = 0; k < K; ++k)
        bases[k] += strides[k][dim];
      if (++index[dim] < shape[dim])
        break;
      for (std::size_t k = 0; k < K; ++k)
        bases[k] -= strides[k][dim] * shape[dim];
      index[dim] = 0;
    }
  }
}

} // namespace shardc::constfold::detail

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_STRIDEDLOOP_H
