//===- Reduction.cpp - reduce_sum / mean / max / min: host side -----------===//
#include "runtime/cuda/Reduction.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status reduce(kernels::ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
              bool keepdims, const TensorView &out, const LaunchContext &context) {
  const char *name = kernels::reduceOpName(op);
  std::vector<bool> reduced;
  SHARDC_KERNEL_TRY(checkReduce(op, input, axes, keepdims, out, rejectFloat64, reduced));
  const size_t rank = input.shape.size();
  // The kept and the reduced dims, each with the input's strides; merging
  // makes neighbouring dims of one kind a single dim. Output o is the kept
  // index space's element o (out drops the reduced dims or keeps them as 1).
  const Shape strides = rowMajorStrides(input.shape);
  Shape keptSizes, keptStrides, reducedSizes, reducedStrides;
  for (size_t d = 0; d < rank; ++d) {
    (reduced[d] ? reducedSizes : keptSizes).push_back(input.shape[d]);
    (reduced[d] ? reducedStrides : keptStrides).push_back(strides[d]);
  }
  ReduceArgs args;
  SHARDC_KERNEL_TRY(toIndexMap(name, Walk<1>::make(keptSizes, {keptStrides}), args.kept));
  SHARDC_KERNEL_TRY(toIndexMap(name, Walk<1>::make(reducedSizes, {reducedStrides}), args.reduced));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.in = input.data;
  args.dtype = input.dtype;
  args.op = int(op);
  args.outCount = out.numel();
  args.reducedCount = numElements(reducedSizes); // 0 for an empty reduction
  launchReduce(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
