//===- Slice.cpp - ONNX Slice with normalized starts/ends/steps -----------===//

#include "dialects/Graph/ConstEval/Movement.h"

#include "dialects/Graph/ConstEval/OpSupport.h"
#include "runtime/core/SliceCount.h"

namespace shardc::constfold {

StatusOr<HostTensor> slice(const HostTensor &operand, const Shape &starts, const Shape &ends,
                           const Shape &steps) {
  if (Status status = detail::checkOperand(operand, "operand"); !status)
    return status;
  const size_t rank = operand.shape.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return Status::error("slice needs one start, end and step per dim of " +
                         formatShape(operand.shape) + " but got " + std::to_string(starts.size()) +
                         ", " + std::to_string(ends.size()) + " and " +
                         std::to_string(steps.size()));

  // A slice is a strided view: begin at the first picked element and move by
  // step * stride in each dim.
  Shape shape(rank), strides(rank);
  Shape sourceStrides = rowMajorStrides(operand.shape);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = operand.shape[d], start = starts[d], end = ends[d],
                  step = steps[d];
    std::string where = "slice of dim " + std::to_string(d) + " (size " +
                        std::to_string(dim) + ") ";
    if (step == 0)
      return Status::error(where + "has step 0");
    // Bounding start/end first keeps the count arithmetic from overflowing.
    if (start < -1 || start > dim || end < -1 || end > dim)
      return Status::error(where + "has start " + std::to_string(start) + " and end " +
                           std::to_string(end) + "; expected clamped values in [-1, " +
                           std::to_string(dim) + "]");
    int64_t count = rt::sliceCount(start, end, step);
    shape[d] = count;
    if (count == 0)
      continue;
    // Every picked index must exist. The last one, start + (count-1)*step,
    // lies between start and end, so computing it cannot overflow.
    int64_t last = start + (count - 1) * step;
    if (start < 0 || start >= dim || last < 0 || last >= dim)
      return Status::error(where + "from " + std::to_string(start) + " to " + std::to_string(end) +
                           " by " + std::to_string(step) + " reads outside the dim");
    base += start * sourceStrides[d];
    // With one element the step is never taken (and may be huge: skip the
    // multiplication); with more, |step| < dim bounds the product.
    strides[d] = count > 1 ? step * sourceStrides[d] : 0;
  }
  StatusOr<HostTensor> out = detail::allocate(operand.type, shape);
  if (out)
    detail::stridedCopy(operand, *out, base, strides);
  return out;
}

} // namespace shardc::constfold
