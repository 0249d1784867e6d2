//===- Rotary.cpp - rotary position embedding: host side ------------------===//
#include "runtime/cuda/Attention.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;

Status rotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
              bool interleaved, const TensorView &out, const LaunchContext &context) {
  const char *name = "rotary";
  RotaryDims dims;
  SHARDC_KERNEL_TRY(checkRotary(input, cos, sin, out, rejectFloat64, dims));
  const Shape &rowsShape = dims.rowsShape, &tableShape = dims.tableShape;
  RotaryArgs args;
  SHARDC_KERNEL_TRY(toIndexMap(
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
  args.features = dims.features;
  args.rotated = dims.rotated;
  launchRotary(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
