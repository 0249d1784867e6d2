//===- Movement.cpp - transpose, slice, concat, split, expand, gather, ... ===//
#include "runtime/cuda/Movement.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;
using kernels::ScatterReduction;

namespace {

/// dst[dstBase + i . dstStrides] = src[srcBase + i . srcStrides] for every
/// index i of `shape` (strides and bases in elements).
Status copyStrided(const char *op, void *dst, int64_t dstBase, const Shape &dstStrides,
                   const void *src, int64_t srcBase, const Shape &srcStrides, const Shape &shape,
                   size_t elementBytes, cudaStream_t stream) {
  CopyArgs args;
  SHARDC_KERNEL_TRY(toIndexMap(op, Walk<2>::make(shape, {dstStrides, srcStrides}), args.map));
  args.count = numElements(shape);
  if (args.count == 0)
    return Status::success();
  args.dst = static_cast<char *>(dst) + dstBase * int64_t(elementBytes);
  args.src = static_cast<const char *>(src) + srcBase * int64_t(elementBytes);
  args.unitBytes = int(elementBytes);
  // Wider units where both sides' innermost runs are contiguous and every
  // other step, the run length and both pointers divide into them.
  IndexMap<2> &map = args.map;
  const int last = map.rank - 1;
  for (int wide : {16, 8, 4}) {
    const int64_t factor = wide / args.unitBytes;
    if (factor <= 1)
      break;
    bool fits = map.strides[0][last] == 1 && map.strides[1][last] == 1 &&
                map.shape[last] % factor == 0 && isAligned(args.dst, wide) &&
                isAligned(args.src, wide);
    for (int d = 0; fits && d < last; ++d)
      fits = map.strides[0][d] % factor == 0 && map.strides[1][d] % factor == 0;
    if (!fits)
      continue;
    map.shape[last] /= factor;
    for (int d = 0; d < last; ++d) {
      map.strides[0][d] /= factor;
      map.strides[1][d] /= factor;
    }
    args.count /= factor;
    args.unitBytes = wide;
    break;
  }
  launchCopy(args, stream);
  return launchStatus(op);
}

} // namespace

Status transpose(const TensorView &input, const std::vector<int64_t> &perm, const TensorView &out,
                 const LaunchContext &context) {
  const char *name = "transpose";
  Shape strides;
  SHARDC_KERNEL_TRY(checkTranspose(input, perm, out, strides));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, 0, strides,
                     out.shape, dtypeSize(out.dtype), context.stream);
}

Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out, const LaunchContext &context) {
  const char *name = "slice";
  int64_t base;
  Shape strides;
  SHARDC_KERNEL_TRY(checkSlice(input, starts, ends, steps, out, base, strides));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, base, strides,
                     out.shape, dtypeSize(out.dtype), context.stream);
}

Status concat(kernels::ViewList inputs, int64_t axis, const TensorView &out,
              const LaunchContext &context) {
  const char *name = "concat";
  SHARDC_KERNEL_TRY(checkConcat(inputs, axis, out));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  // Each input is the block of out at its offset along `axis`, read through
  // out's strides.
  const Shape outStrides = rowMajorStrides(out.shape);
  int64_t offset = 0;
  for (const TensorView &input : inputs) {
    SHARDC_KERNEL_TRY(copyStrided(name, out.data, offset * outStrides[size_t(axis)], outStrides,
                                  input.data, 0, rowMajorStrides(input.shape), input.shape,
                                  dtypeSize(out.dtype), context.stream));
    offset += input.shape[size_t(axis)];
  }
  return Status::success();
}

Status split(const TensorView &input, int64_t axis, kernels::ViewList outs,
             const LaunchContext &context) {
  const char *name = "split";
  SHARDC_KERNEL_TRY(checkSplit(input, axis, outs));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  const Shape inputStrides = rowMajorStrides(input.shape);
  int64_t offset = 0;
  for (const TensorView &out : outs) {
    SHARDC_KERNEL_TRY(copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data,
                                  offset * inputStrides[size_t(axis)], inputStrides, out.shape,
                                  dtypeSize(input.dtype), context.stream));
    offset += out.shape[size_t(axis)];
  }
  return Status::success();
}

Status expand(const TensorView &input, const TensorView &out, const LaunchContext &context) {
  const char *name = "expand";
  SHARDC_KERNEL_TRY(checkExpand(input, out));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, 0,
                     broadcastStrides(input.shape, out.shape), out.shape, dtypeSize(out.dtype),
                     context.stream);
}

Status copy(const TensorView &input, const TensorView &out, const LaunchContext &context) {
  SHARDC_KERNEL_TRY(checkCopy(input, out));
  if (context.checkOnly)
    return Status::success();
  return copyDataToResult(input, out, context.stream);
}

Status gather(const TensorView &data, const TensorView &indices, int64_t axis,
              const TensorView &out, const LaunchContext &context) {
  const char *name = "gather";
  SHARDC_KERNEL_TRY(checkGather(data, indices, axis, out));
  SHARDC_KERNEL_TRY(checkIndexType(name, indices));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  GatherArgs args;
  args.out = out.data;
  args.data = data.data;
  args.indices = indices.data;
  args.indices64 = indices.dtype == DType::I64;
  args.outer = product(data.shape, 0, size_t(axis));
  args.dim = data.shape[size_t(axis)];
  args.count = indices.numel();
  args.inner = product(data.shape, size_t(axis) + 1, data.shape.size());
  args.unitBytes = int(dtypeSize(data.dtype));
  // Whole rows (an embedding's) move in 16-byte units where they divide.
  for (int wide : {16, 8, 4}) {
    const int64_t factor = wide / args.unitBytes;
    if (factor > 1 && args.inner % factor == 0 && isAligned(out.data, wide) &&
        isAligned(data.data, wide)) {
      args.inner /= factor;
      args.unitBytes = wide;
      break;
    }
  }
  args.errors = deviceErrors(context.stream);
  launchGather(args, context.stream);
  return launchStatus(name);
}

Status scatterElements(const TensorView &data, const TensorView &indices, const TensorView &updates,
                       int64_t axis, ScatterReduction reduction, const TensorView &out,
                       const LaunchContext &context) {
  const char *name = "scatter_elements";
  SHARDC_KERNEL_TRY(checkScatterElements(data, indices, updates, axis, reduction, out));
  SHARDC_KERNEL_TRY(checkIndexType(name, indices));
  // The lines: index positions with all but `axis` fixed.
  Shape lineShape = indices.shape, indexStrides = rowMajorStrides(indices.shape);
  Shape dataStrides = rowMajorStrides(data.shape);
  ScatterArgs args;
  args.length = lineShape[size_t(axis)];
  args.indexAxisStride = indexStrides[size_t(axis)];
  args.dataAxisStride = dataStrides[size_t(axis)];
  lineShape.erase(lineShape.begin() + axis);
  indexStrides.erase(indexStrides.begin() + axis);
  dataStrides.erase(dataStrides.begin() + axis);
  SHARDC_KERNEL_TRY(
      toIndexMap(name, Walk<2>::make(lineShape, {indexStrides, dataStrides}), args.map));
  if (context.checkOnly)
    return Status::success();
  SHARDC_KERNEL_TRY(copyDataToResult(data, out, context.stream));
  if (indices.numel() == 0)
    return Status::success();
  args.out = out.data;
  args.indices = indices.data;
  args.updates = updates.data;
  args.indices64 = indices.dtype == DType::I64;
  args.dtype = data.dtype;
  args.reduction = int(reduction);
  args.lines = numElements(lineShape);
  args.dim = data.shape[size_t(axis)];
  args.errors = deviceErrors(context.stream);
  launchScatter(args, context.stream);
  return launchStatus(name);
}

Status trilu(const TensorView &input, int64_t k, bool upper, const TensorView &out,
             const LaunchContext &context) {
  const char *name = "trilu";
  SHARDC_KERNEL_TRY(checkTrilu(input, out));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  TriluArgs args;
  args.out = out.data;
  args.in = input.data;
  args.elementBytes = int(dtypeSize(input.dtype));
  args.count = input.numel();
  args.rows = input.shape[input.shape.size() - 2];
  args.cols = input.shape.back();
  args.k = k;
  args.upper = upper;
  launchTrilu(args, context.stream);
  return launchStatus(name);
}

} // namespace shardc::rt::cuda
