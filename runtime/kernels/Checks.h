//===- Checks.h - Operand checks both backends run before a kernel -*- C++ -*-===//
//
// The CPU kernels and the host side of the CUDA kernels accept and reject
// the same steps with the same messages, so each op's operand validation and
// result-shape arithmetic lives here once and both call it. A check returns
// the facts the kernels go on to use (strides, dims), so neither recomputes
// them. Internal to the runtime: the CPU kernels and the CUDA backend both
// link this library, and neither links the other.
//
// Where the CUDA backend narrows the element types (it has no float64), the
// check takes `extra`: what the backend further requires of the element type,
// run right after the shared type check so that the first error reported is
// the same as before for every operand mix. The CPU passes nullptr.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_KERNELS_CHECKS_H
#define SHARDC_RUNTIME_KERNELS_CHECKS_H

#include "runtime/core/Tensor.h"
#include "runtime/kernels/Operands.h"
#include "runtime/kernels/Ops.h"
#include "runtime/kernels/Shapes.h"
#include "runtime/kernels/ViewList.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace shardc::rt::kernels {

/// A backend's further requirement on an element type (see the file comment).
using TypeCheck = Status (*)(const char *op, const TensorView &tensor);

//===----------------------------------------------------------------------===//
// Movement and indexing
//===----------------------------------------------------------------------===//

/// Both tensors well-formed and `out` of input's element type.
Status checkSameType(const char *op, const TensorView &input, const TensorView &out);

/// transpose: `perm` a permutation of input's dims and out the permuted
/// shape. `strides`: input's row-major strides, permuted (read out through it).
Status checkTranspose(const TensorView &input, const std::vector<int64_t> &perm,
                      const TensorView &out, Shape &strides);

/// slice: in-range starts/ends, non-zero steps, out of the picked counts.
/// out[i] is input[base + i . strides] (elements).
Status checkSlice(const TensorView &input, const std::vector<int64_t> &starts,
                  const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
                  const TensorView &out, int64_t &base, Shape &strides);

/// concat: inputs of out's type, equal dims but `axis`, summing to out.
Status checkConcat(ViewList inputs, int64_t axis, const TensorView &out);

/// split: outs of input's type, equal dims but `axis`, summing to input's.
Status checkSplit(const TensorView &input, int64_t axis, ViewList outs);

/// expand: same type, input broadcasting to out.
Status checkExpand(const TensorView &input, const TensorView &out);

/// copy (a state's write, graph.assign): out of input's type and shape.
Status checkCopy(const TensorView &input, const TensorView &out);

/// Index tensors are I32 or I64.
Status checkIndexType(const char *op, const TensorView &indices);

/// gather, up to the index values: out = data[:axis] + indices + data[axis+1:].
Status checkGather(const TensorView &data, const TensorView &indices, int64_t axis,
                   const TensorView &out);

/// scatter_elements, up to the index values.
Status checkScatterElements(const TensorView &data, const TensorView &indices,
                            const TensorView &updates, int64_t axis, ScatterReduction reduction,
                            const TensorView &out);

/// gather_elements, up to the index values: indices of data's rank, no
/// larger than data outside `axis`; out of the indices' shape and data's type.
Status checkGatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                           const TensorView &out);

/// gather_nd and scatter_nd see data as [batches, ...]: within each batch
/// (of `batchStride` elements), each of `tuples` k-tuples names the slice of
/// `slice` contiguous elements at sum_j index_j * strides[j], index_j within
/// [-dims[j], dims[j]) (checked by the kernels, with the index values).
struct IndexTupleDims {
  int64_t batches = 1, tuples = 0, slice = 1, batchStride = 0;
  Shape dims, strides; // of the k indexed dims
};

/// gather_nd, up to the index values: batchDims leading dims shared by data
/// and indices, 1 <= k <= rank - batchDims, out [indices[:-1]..., data[batchDims+k:]...].
Status checkGatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                     const TensorView &out, IndexTupleDims &dims);

/// scatter_nd, up to the index values: k <= rank, updates of the shape
/// indices[:-1] + data[k:], out of data's; one batch.
Status checkScatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                      ScatterReduction reduction, const TensorView &out, IndexTupleDims &dims);

/// trilu: same type and shape, rank >= 2.
Status checkTrilu(const TensorView &input, const TensorView &out);

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// A matmul as batches of [m, k] x [k, n]: 1-D operands promoted to
/// matrices, batch the broadcast of aBatch and bBatch. A transposed operand
/// (rank >= 2) stores each of its matrices with the last two dims swapped:
/// lhs [..., k, m], rhs [..., n, k].
struct MatMulDims {
  Shape aBatch, bBatch, batch;
  int64_t m = 0, k = 0, n = 0;
};
Status checkMatMul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
                   MatMulDims &dims, bool transposeLhs = false, bool transposeRhs = false);

/// linear: out [m, n] = input [m, k] x weight (+ bias [n]).
struct LinearDims {
  int64_t m = 0, k = 0, n = 0;
};
Status checkLinear(const TensorView &input, const TensorView &weight, const TensorView *bias,
                   bool transposeWeight, const TensorView &out, LinearDims &dims);

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// softmax and the norms: a float input (and `extra`, when given), out of its
/// type and shape, `axis` one of its dims.
Status checkAlongAxis(const char *op, const TensorView &input, int64_t axis,
                      const TensorView &out, TypeCheck extra);

/// reduce_*: an integer or float input, strictly increasing axes, out the
/// input without them (or with them as 1). `reduced`: per input dim.
Status checkReduce(ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
                   bool keepdims, const TensorView &out, TypeCheck extra,
                   std::vector<bool> &reduced);

/// cumsum: an I32, I64 or float input, out of its type and shape, the
/// input seen as [outer, dim (the axis), inner].
struct ScanDims {
  int64_t outer = 0, dim = 0, inner = 0;
};
Status checkCumSum(const TensorView &input, int64_t axis, const TensorView &out, ScanDims &dims);

/// topk: k within the axis; values and indices (I64) of the input with k there.
Status checkTopK(const TensorView &input, int64_t k, int64_t axis, const TensorView &values,
                 const TensorView &indices);

//===----------------------------------------------------------------------===//
// Attention and rotary
//===----------------------------------------------------------------------===//

/// Rotary rows: the input's dims but the last (features), of which the
/// first `rotated` rotate; cos and sin rows (tableShape) broadcast to them.
struct RotaryDims {
  Shape rowsShape, tableShape;
  int64_t features = 0, rotated = 0;
};
Status checkRotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
                   const TensorView &out, TypeCheck extra, RotaryDims &dims);

/// Attention over [batch..., heads, seq, head size] operands.
struct AttentionDims {
  Shape batchShape;
  int64_t batch = 0, headsQ = 0, headsKv = 0, seqQ = 0, seqK = 0, headDim = 0, valueDim = 0;
};
/// Everything but the mask, through the result's shape.
Status checkAttention(const TensorView &query, const TensorView &key, const TensorView &value,
                      const TensorView &out, TypeCheck extra, AttentionDims &dims);
/// The mask: bool or the query's type, broadcasting to the scores [batch...,
/// headsQ, seqQ, seqK]. `strides`: the mask's strides over the scores.
Status checkAttentionMask(const TensorView &query, const TensorView &mask,
                          const AttentionDims &dims, Shape &strides);

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// The walk over out's index space reading every input broadcast: operand 0
/// is out (row-major), operand k the k-th input. Fails unless the inputs
/// broadcast together to exactly out's shape.
template <size_t N>
Status broadcastWalk(const char *op, const std::array<const TensorView *, N> &inputs,
                     const TensorView &out, Walk<N + 1> &walk) {
  Shape shape = inputs[0]->shape;
  for (size_t k = 1; k < N; ++k) {
    Shape next;
    if (!broadcastShapes(shape, inputs[k]->shape, next))
      return fail(op,
                  "shapes " + str(shape) + " and " + str(inputs[k]->shape) + " do not broadcast");
    shape = std::move(next);
  }
  SHARDC_KERNEL_TRY(checkShape(op, "result", out, shape));
  std::array<Shape, N + 1> strides;
  strides[0] = rowMajorStrides(shape);
  for (size_t k = 0; k < N; ++k)
    strides[k + 1] = broadcastStrides(inputs[k]->shape, shape);
  walk = Walk<N + 1>::make(shape, strides);
  return Status::success();
}

/// A binary op's operand types: bool for and/or, no bool for pow (whose
/// exponent may have another type), one integer or float type otherwise.
/// The broadcast is the caller's walk.
Status checkBinary(BinaryOp op, const TensorView &lhs, const TensorView &rhs,
                   const TensorView &out);
/// compare's operand types (the broadcast is the caller's walk).
Status checkCompare(const TensorView &lhs, const TensorView &rhs, const TensorView &out);
/// is_nan and is_inf: a float input, out bool of its shape.
Status checkClassify(const char *op, const TensorView &input, const TensorView &out);
/// where's operand types (the broadcast is the caller's walk).
Status checkWhere(const TensorView &condition, const TensorView &trueValue,
                  const TensorView &falseValue, const TensorView &out);

} // namespace shardc::rt::kernels

#endif // SHARDC_RUNTIME_KERNELS_CHECKS_H
