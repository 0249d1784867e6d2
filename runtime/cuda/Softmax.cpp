//===- Softmax.cpp - softmax along one axis: host side --------------------===//
#include "runtime/cuda/Reduction.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status softmax(const TensorView &input, int64_t axis, const TensorView &out,
               const LaunchContext &context) {
  const char *name = "softmax";
  SHARDC_KERNEL_TRY(checkAlongAxis(name, input, axis, out, rejectFloat64));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  SoftmaxArgs args;
  args.out = out.data;
  args.in = input.data;
  args.dtype = input.dtype;
  args.outer = product(input.shape, 0, size_t(axis));
  args.dim = input.shape[size_t(axis)];
  args.inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  launchSoftmax(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
