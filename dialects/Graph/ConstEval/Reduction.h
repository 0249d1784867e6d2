//===- Reduction.h - Reductions, CumSum, Softmax and TopK -------*- C++ -*-===//

#ifndef SHARDC_DIALECTS_GRAPH_CONSTEVAL_REDUCTION_H
#define SHARDC_DIALECTS_GRAPH_CONSTEVAL_REDUCTION_H

#include "dialects/Graph/ConstEval/HostTensor.h"

#include <vector>

namespace shardc::constfold {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, SumSquare };

/// ONNX Reduce* over `axes` (non-negative, each < rank, no duplicates, any
/// order); empty `axes` reduces all dims (the caller handles ONNX's
/// noop_with_empty_axes). keepdims leaves the reduced dims as size 1.
/// Integer or float operands; Bool fails.
///  - Floats accumulate in double in row-major order and round once at the end.
///  - Integer Sum/Prod/SumSquare wrap to the type, like binary().
///  - Integer Mean divides the exact sum, truncating toward zero; it fails if
///    the sum does not fit the element type, because runtimes that accumulate
///    in the element type would give a different, wrapped answer.
///  - An empty reduction (a reduced dim of size 0) gives Sum/SumSquare 0,
///    Prod 1, Max -inf (integers: the type's minimum), Min +inf (maximum),
///    float Mean NaN; integer Mean fails.
///  - Float Max/Min propagate NaN.
StatusOr<HostTensor> reduce(ReduceOp op, const HostTensor &operand,
                            const std::vector<int64_t> &axes, bool keepdims);

/// ONNX CumSum along `axis` (0 <= axis < rank): element j of a line is the
/// sum of elements 0..j (0..j-1 when `exclusive`), or of j..end (j+1..end)
/// when `reverse`. I32, I64 or float operands. Integers wrap to the type;
/// floats are summed in double and each result rounded once.
StatusOr<HostTensor> cumSum(const HostTensor &operand, int64_t axis, bool exclusive, bool reverse);

/// ONNX Softmax (opset >= 13) along one axis (0 <= axis < rank) of a float
/// tensor, computed in double after subtracting the maximum of each row so
/// that exp cannot overflow.
StatusOr<HostTensor> softmax(const HostTensor &operand, int64_t axis);

struct TopKResult {
  HostTensor values;  ///< operand's type, dim `axis` cut to k
  HostTensor indices; ///< I64, positions along `axis` in the operand
};

/// ONNX TopK: the k (0 <= k <= dim) largest or smallest elements along `axis`
/// of an integer or float tensor. Equal values keep the lower index first, and
/// the result is always sorted (a valid answer for sorted=false too, whose
/// order ONNX leaves unspecified). NaN orders above every number, as in numpy's
/// sort: first when largest, last when smallest.
StatusOr<TopKResult> topk(const HostTensor &operand, int64_t k, int64_t axis, bool largest,
                          bool sorted);

} // namespace shardc::constfold

#endif // SHARDC_DIALECTS_GRAPH_CONSTEVAL_REDUCTION_H
