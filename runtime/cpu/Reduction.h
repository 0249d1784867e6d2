//===- Reduction.h - reductions, cumsum, softmax, topk ----------*- C++ -*-===//
//
// Numerics (documented because callers compare against other runtimes):
//  - reduce sum/mean over floats accumulate in double and round once, so a
//    sum over a long axis is as exact as the element type allows; max/min
//    propagate NaN. Integer sum wraps to the type; integer mean divides the
//    64-bit sum, truncating toward zero.
//  - An empty reduction (a reduced dim of size 0) gives sum 0, mean NaN
//    (integers: 0), max -inf / min +inf (integers: the type's min / max).
//  - cumsum over floats accumulates in double along the axis and rounds each
//    result once; integer cumsum wraps to the type.
//  - softmax subtracts each row's maximum before exp (fp32 exp; the row sum
//    is accumulated in double). A row of all -inf, or with a NaN, gives NaN.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_REDUCTION_H
#define SHARDC_RUNTIME_CPU_REDUCTION_H

#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/Ops.h"

#include <vector>

namespace shardc::rt::cpu {

// The kernel contract's, shared with the CUDA backend.
using kernels::ReduceOp;
using kernels::reduceOpFromName;
using kernels::reduceOpName;

/// graph.reduce_*: reduces exactly the dims in `axes` (strictly increasing,
/// each in [0, rank)); out drops them, or keeps them as 1 with keepdims.
/// Empty `axes` reduces nothing (out is a copy), as in the graph dialect;
/// ONNX's "empty means all" is resolved by the importer. Integer or float.
Status reduce(ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
              bool keepdims, const TensorView &out);

/// graph.cumsum: the running sum along `axis` (excluding the element itself
/// with `exclusive`, from the end of the axis with `reverse`). I32, I64 or
/// float; out has input's shape and may be input itself (in place).
Status cumSum(const TensorView &input, int64_t axis, bool exclusive, bool reverse,
              const TensorView &out);

/// graph.softmax along `axis`; float types; out has input's shape.
Status softmax(const TensorView &input, int64_t axis, const TensorView &out);

/// graph.topk: the k largest (or smallest) elements along `axis` into
/// `values` (input's type) and their positions into `indices` (I64), both of
/// input's shape with dim `axis` cut to k. The result is always sorted (also
/// when `sorted` is false, a valid order for it); equal values keep the lower
/// index first; NaN orders above every number (first when largest, last when
/// smallest), like numpy's sort.
Status topk(const TensorView &input, int64_t k, int64_t axis, bool largest, bool sorted,
            const TensorView &values, const TensorView &indices);

} // namespace shardc::rt::cpu

#endif // SHARDC_RUNTIME_CPU_REDUCTION_H
