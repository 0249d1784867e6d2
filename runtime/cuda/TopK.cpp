//===- TopK.cpp - the k largest or smallest along an axis: host side ------===//
#include "runtime/cuda/Reduction.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status topk(const TensorView &input, int64_t k, int64_t axis, bool largest,
            bool /*sorted: the result always is*/, const TensorView &values,
            const TensorView &indices, const LaunchContext &context) {
  const char *name = "topk";
  SHARDC_KERNEL_TRY(checkTopK(input, k, axis, values, indices));
  if (context.checkOnly || values.numel() == 0)
    return Status::success();
  TopKArgs args;
  args.values = values.data;
  args.indices = indices.as<int64_t>();
  args.in = input.data;
  args.dtype = input.dtype;
  args.outer = product(input.shape, 0, size_t(axis));
  args.dim = input.shape[size_t(axis)];
  args.inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  args.k = k;
  args.largest = largest;
  launchTopK(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
