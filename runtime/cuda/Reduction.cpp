//===- Reduction.cpp - reduce_sum / mean / max / min: host side -----------===//
#include "runtime/cuda/Reduction.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status reduce(cpu::ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
              bool keepdims, const TensorView &out, const LaunchContext &context) {
  const char *name = cpu::reduceOpName(op);
  SHARDC_CPU_TRY(checkTensor(name, "input", input));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  if (!isFloatType(input.dtype) && !isIntType(input.dtype))
    return fail(name,
                std::string("needs an integer or float input but got ") + dtypeName(input.dtype));
  if (input.dtype == DType::F64)
    return float64Unsupported(name);
  SHARDC_CPU_TRY(checkDType(name, "result", out, input.dtype));
  const size_t rank = input.shape.size();
  std::vector<bool> reduced(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    SHARDC_CPU_TRY(checkAxis(name, axes[i], rank));
    if (i > 0 && axes[i] <= axes[i - 1])
      return fail(name, "axes must be strictly increasing; got " + str(axes));
    reduced[size_t(axes[i])] = true;
  }
  Shape expected;
  for (size_t d = 0; d < rank; ++d)
    if (!reduced[d])
      expected.push_back(input.shape[d]);
    else if (keepdims)
      expected.push_back(1);
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
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
  SHARDC_CPU_TRY(toIndexMap(name, Walk<1>::make(keptSizes, {keptStrides}), args.kept));
  SHARDC_CPU_TRY(toIndexMap(name, Walk<1>::make(reducedSizes, {reducedStrides}), args.reduced));
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
