//===- Shapes.h - broadcasting, strides and strided walks -------*- C++ -*-===//
//
// The shape arithmetic both backends run on the host: numpy broadcasting and
// a strided "walk" that visits an index space in row-major order as runs of
// its innermost dim, with one offset per operand. Broadcasting, expand,
// transpose and slice are all such walks (stride 0 repeats, permuted strides
// transpose, negative strides reverse); the CPU kernels run them, the CUDA
// kernels take their merged dims as launch parameters.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_SHAPES_H
#define SHARDC_RUNTIME_KERNELS_SHAPES_H

#include "runtime/core/Tensor.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardc::rt::kernels {

/// Row-major element strides.
Shape rowMajorStrides(const Shape &shape);
/// numpy broadcasting of two shapes; false if incompatible.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &result);
/// Whether `from` broadcasts to exactly `to` (right-aligned, each dim equal or 1).
bool broadcastsTo(const Shape &from, const Shape &to);
/// Strides that read a tensor of shape `from` as if it had shape `to`
/// (precondition: broadcastsTo): 0 where `from` lacks the dim or has size 1.
Shape broadcastStrides(const Shape &from, const Shape &to);
/// Product of shape[begin, end).
int64_t product(const Shape &shape, size_t begin, size_t end);

/// An index space with N operands, each with element strides per dim. make()
/// simplifies it without changing the visit order: size-1 dims dropped and
/// neighbours merged wherever every operand steps through them as one dim, so
/// a same-shape elementwise op becomes one flat run and [8,1]+[1,16] two dims.
template <size_t N> struct Walk {
  Shape shape; // at least one dim
  std::array<Shape, N> strides;

  static Walk make(const Shape &shape, const std::array<Shape, N> &strides) {
    Walk walk;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      if (!walk.shape.empty()) {
        // Merge into the previous dim if each operand's stride there equals
        // its stride here times this dim's size.
        bool mergeable = true;
        for (size_t k = 0; k < N; ++k)
          mergeable &= walk.strides[k].back() == strides[k][d] * shape[d];
        if (mergeable) {
          walk.shape.back() *= shape[d];
          for (size_t k = 0; k < N; ++k)
            walk.strides[k].back() = strides[k][d];
          continue;
        }
      }
      walk.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k)
        walk.strides[k].push_back(strides[k][d]);
    }
    if (walk.shape.empty()) {
      walk.shape.push_back(1);
      for (size_t k = 0; k < N; ++k)
        walk.strides[k].push_back(0);
    }
    return walk;
  }

  int64_t inner() const { return shape.back(); }
  int64_t innerStride(size_t k) const { return strides[k].back(); }

  /// Visits elements [begin, end) of the row-major order as runs along the
  /// innermost dim: fn(offsets, count), element e of a run at
  /// offsets[k] + e * innerStride(k). Offsets are relative to bases.
  template <typename Fn>
  void run(int64_t begin, int64_t end, std::array<int64_t, N> bases, Fn &&fn) const {
    if (begin >= end)
      return;
    const size_t rank = shape.size();
    // The running index, on the stack for the ranks real walks have (dims
    // are already merged), so that a walk per output element (reductions)
    // does not allocate.
    constexpr size_t kInlineRank = 8;
    int64_t inlineIndex[kInlineRank] = {};
    std::vector<int64_t> heapIndex;
    int64_t *index = inlineIndex;
    if (rank > kInlineRank) {
      heapIndex.assign(rank, 0);
      index = heapIndex.data();
    }
    // Decompose `begin` into an index, last dim fastest.
    int64_t rest = begin;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    std::array<int64_t, N> offsets = bases;
    for (size_t d = 0; d < rank; ++d)
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    int64_t remaining = end - begin;
    const int64_t innerSize = shape.back();
    while (remaining > 0) {
      const int64_t count = std::min(innerSize - index[rank - 1], remaining);
      fn(static_cast<const std::array<int64_t, N> &>(offsets), count);
      remaining -= count;
      if (remaining == 0)
        break;
      // Move to the start of the next run: rewind the inner dim, carry.
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= index[rank - 1] * strides[k].back();
      index[rank - 1] = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        for (size_t k = 0; k < N; ++k)
          offsets[k] += strides[k][d];
        if (++index[d] < shape[d])
          break;
        for (size_t k = 0; k < N; ++k)
          offsets[k] -= strides[k][d] * shape[d];
        index[d] = 0;
      }
    }
  }
};

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_SHAPES_H
