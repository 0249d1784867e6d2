//===- Normalization.cpp - layer_norm and rms_norm: host side -------------===//
#include "runtime/cuda/Normalization.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

namespace {

/// Checks a scale or bias against the normalized dims and says how the
/// kernel reads it: directly when it has their element count (its dims then
/// equal them up to 1s), else through broadcast strides.
Status bindParameter(const char *op, const char *role, const TensorView &param,
                     const TensorView &input, const Shape &normalized, bool &direct,
                     IndexMap<1> &map) {
  SHARDC_KERNEL_TRY(checkTensor(op, role, param));
  SHARDC_KERNEL_TRY(checkDType(op, role, param, input.dtype));
  if (!broadcastsTo(param.shape, normalized))
    return fail(op, std::string(role) +
                        " shape does not fit the normalized dims; expected to broadcast to " +
                        str(normalized) + " but got " + str(param.shape));
  direct = param.numel() == numElements(normalized);
  if (direct)
    return Status::success();
  return toIndexMap(op, Walk<1>::make(normalized, {broadcastStrides(param.shape, normalized)}),
                    map);
}

Status normalize(const char *op, bool rms, const TensorView &input, const TensorView &scale,
                 const TensorView *bias, int64_t axis, double epsilon, const TensorView &out,
                 const LaunchContext &context) {
  SHARDC_KERNEL_TRY(checkAlongAxis(op, input, axis, out, rejectFloat64));
  const Shape normalized(input.shape.begin() + axis, input.shape.end());
  NormArgs args;
  SHARDC_KERNEL_TRY(
      bindParameter(op, "scale", scale, input, normalized, args.scaleDirect, args.scaleMap));
  if (bias)
    SHARDC_KERNEL_TRY(
        bindParameter(op, "bias", *bias, input, normalized, args.biasDirect, args.biasMap));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.in = input.data;
  args.scale = scale.data;
  args.bias = bias ? bias->data : nullptr;
  args.dtype = input.dtype;
  args.rms = rms;
  args.rows = product(input.shape, 0, size_t(axis));
  args.n = numElements(normalized);
  args.epsilon = float(epsilon);
  args.vectorized = isAligned(input.data, 16) && isAligned(out.data, 16) &&
                    args.n * int64_t(dtypeSize(input.dtype)) % 16 == 0;
  launchNorm(args, context.stream);
  return launchStatus(op);
}

} // namespace

Status layerNorm(const TensorView &input, const TensorView &scale, const TensorView *bias,
                 int64_t axis, double epsilon, const TensorView &out,
                 const LaunchContext &context) {
  return normalize("layer_norm", /*rms=*/false, input, scale, bias, axis, epsilon, out, context);
}

Status rmsNorm(const TensorView &input, const TensorView &scale, int64_t axis, double epsilon,
               const TensorView &out, const LaunchContext &context) {
  return normalize("rms_norm", /*rms=*/true, input, scale, nullptr, axis, epsilon, out, context);
}

} // namespace shardc::rt::cuda
