//===- Rotary.cpp - rotary position embedding: host side ------------------===//
#include "runtime/cuda/Attention.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status rotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
              bool interleaved, const TensorView &out, const LaunchContext &context) {
  const char *name = "rotary";
  SHARDC_CPU_TRY(checkTensor(name, "input", input));
  SHARDC_CPU_TRY(checkTensor(name, "cos", cos));
  SHARDC_CPU_TRY(checkTensor(name, "sin", sin));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  SHARDC_CPU_TRY(checkCudaFloat(name, "input", input));
  SHARDC_CPU_TRY(checkDType(name, "cos", cos, input.dtype));
  SHARDC_CPU_TRY(checkDType(name, "sin", sin, input.dtype));
  SHARDC_CPU_TRY(checkDType(name, "result", out, input.dtype));
  SHARDC_CPU_TRY(checkShape(name, "result", out, input.shape));
  if (cos.shape != sin.shape)
    return fail(name,
                "cos and sin shapes differ; got " + str(cos.shape) + " and " + str(sin.shape));
  if (input.shape.empty() || cos.shape.empty())
    return fail(name, "input and cos must have rank >= 1");
  const int64_t features = input.shape.back(), rotated = cos.shape.back();
  if (rotated % 2 != 0 || rotated > features || rotated == 0)
    return fail(name, "rotated features must be even, non-zero and at most " +
                          std::to_string(features) + "; got " + std::to_string(rotated));
  const Shape rowsShape(input.shape.begin(), input.shape.end() - 1);
  const Shape tableShape(cos.shape.begin(), cos.shape.end() - 1);
  if (!broadcastsTo(tableShape, rowsShape))
    return fail(name, "cos does not broadcast to the input; expected " + str(rowsShape) +
                          " but got " + str(tableShape));
  RotaryArgs args;
  SHARDC_CPU_TRY(toIndexMap(
      name, Walk<1>::make(rowsShape, {broadcastStrides(tableShape, rowsShape)}), args.table));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.in = input.data;
  args.cos = cos.data;
  args.sin = sin.data;
  args.dtype = input.dtype;
  args.interleaved = interleaved;
  args.inPlace = input.data == out.data;
  args.rows = numElements(rowsShape);
  args.features = features;
  args.rotated = rotated;
  launchRotary(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
