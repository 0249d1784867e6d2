//===- Movement.cpp - transpose, slice, concat, split, expand, gather, ... ===//
#include "runtime/cuda/Movement.h"

#include "runtime/cuda/CudaStatus.h"

namespace shardc::rt::cuda {

using namespace detail;
using cpu::ScatterReduction;

namespace {

/// dst[dstBase + i . dstStrides] = src[srcBase + i . srcStrides] for every
/// index i of `shape` (strides and bases in elements).
Status copyStrided(const char *op, void *dst, int64_t dstBase, const Shape &dstStrides,
                   const void *src, int64_t srcBase, const Shape &srcStrides, const Shape &shape,
                   size_t elementBytes, cudaStream_t stream) {
  CopyArgs args;
  SHARDC_CPU_TRY(toIndexMap(op, Walk<2>::make(shape, {dstStrides, srcStrides}), args.map));
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

Status checkSameType(const char *op, const TensorView &input, const TensorView &out) {
  SHARDC_CPU_TRY(checkTensor(op, "input", input));
  SHARDC_CPU_TRY(checkTensor(op, "result", out));
  return checkDType(op, "result", out, input.dtype);
}

/// ceil(a / b) for b != 0.
int64_t ceilDiv(int64_t a, int64_t b) {
  const int64_t quotient = a / b, remainder = a % b;
  return remainder != 0 && (remainder > 0) == (b > 0) ? quotient + 1 : quotient;
}

/// Index tensors are I32 or I64.
Status checkIndexType(const char *op, const TensorView &indices) {
  if (indices.dtype != DType::I64 && indices.dtype != DType::I32)
    return fail(op,
                std::string("indices must be int32 or int64 but got ") + dtypeName(indices.dtype));
  return Status::success();
}

} // namespace

Status transpose(const TensorView &input, const std::vector<int64_t> &perm, const TensorView &out,
                 const LaunchContext &context) {
  const char *name = "transpose";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  const size_t rank = input.shape.size();
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (size_t i = 0; valid && i < rank; ++i) {
    valid = perm[i] >= 0 && perm[i] < int64_t(rank) && !seen[size_t(perm[i])];
    if (valid)
      seen[size_t(perm[i])] = true;
  }
  if (!valid)
    return fail(name, "perm " + str(perm) + " is not a permutation of the " + std::to_string(rank) +
                          " dims of " + str(input.shape));
  Shape expected(rank), strides(rank);
  const Shape inputStrides = rowMajorStrides(input.shape);
  for (size_t i = 0; i < rank; ++i) {
    expected[i] = input.shape[size_t(perm[i])];
    strides[i] = inputStrides[size_t(perm[i])];
  }
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, 0, strides,
                     out.shape, dtypeSize(out.dtype), context.stream);
}

Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out, const LaunchContext &context) {
  const char *name = "slice";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  const size_t rank = input.shape.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return fail(name, "needs one start, end and step per dim of " + str(input.shape) + " but got " +
                          std::to_string(starts.size()) + ", " + std::to_string(ends.size()) +
                          " and " + std::to_string(steps.size()));
  Shape expected(rank), strides(rank, 0);
  const Shape inputStrides = rowMajorStrides(input.shape);
  int64_t base = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = input.shape[d], start = starts[d], end = ends[d], step = steps[d];
    const std::string where = "dim " + std::to_string(d) + " (size " + std::to_string(dim) + ")";
    if (step == 0)
      return fail(name, where + " has step 0");
    if (start < -1 || start > dim || end < -1 || end > dim)
      return fail(name, where + " has start " + std::to_string(start) + " and end " +
                            std::to_string(end) + "; expected values in [-1, " +
                            std::to_string(dim) + "]");
    const int64_t count = std::max<int64_t>(ceilDiv(end - start, step), 0);
    expected[d] = count;
    if (count == 0)
      continue;
    const int64_t last = start + (count - 1) * step;
    if (start < 0 || start >= dim || last < 0 || last >= dim)
      return fail(name, where + " from " + std::to_string(start) + " to " + std::to_string(end) +
                            " by " + std::to_string(step) + " reads outside the dim");
    base += start * inputStrides[d];
    strides[d] = count > 1 ? step * inputStrides[d] : 0;
  }
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, base, strides,
                     out.shape, dtypeSize(out.dtype), context.stream);
}

Status concat(cpu::ViewList inputs, int64_t axis, const TensorView &out,
              const LaunchContext &context) {
  const char *name = "concat";
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  if (inputs.size() == 0)
    return fail(name, "needs at least one input");
  const Shape &first = inputs[0].shape;
  SHARDC_CPU_TRY(checkAxis(name, axis, first.size()));
  Shape expected = first;
  expected[size_t(axis)] = 0;
  for (const TensorView &input : inputs) {
    SHARDC_CPU_TRY(checkTensor(name, "input", input));
    SHARDC_CPU_TRY(checkDType(name, "input", input, out.dtype));
    bool fits = input.shape.size() == first.size();
    for (size_t d = 0; fits && d < first.size(); ++d)
      fits = int64_t(d) == axis || input.shape[d] == first[d];
    if (!fits)
      return fail(name, "input " + str(input.shape) + " does not match " + str(first) +
                            " outside axis " + std::to_string(axis));
    expected[size_t(axis)] += input.shape[size_t(axis)];
  }
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (context.checkOnly || out.numel() == 0)
    return Status::success();
  // Each input is the block of out at its offset along `axis`, read through
  // out's strides.
  const Shape outStrides = rowMajorStrides(out.shape);
  int64_t offset = 0;
  for (const TensorView &input : inputs) {
    SHARDC_CPU_TRY(copyStrided(name, out.data, offset * outStrides[size_t(axis)], outStrides,
                               input.data, 0, rowMajorStrides(input.shape), input.shape,
                               dtypeSize(out.dtype), context.stream));
    offset += input.shape[size_t(axis)];
  }
  return Status::success();
}

Status split(const TensorView &input, int64_t axis, cpu::ViewList outs,
             const LaunchContext &context) {
  const char *name = "split";
  SHARDC_CPU_TRY(checkTensor(name, "input", input));
  SHARDC_CPU_TRY(checkAxis(name, axis, input.shape.size()));
  int64_t total = 0;
  for (const TensorView &out : outs) {
    SHARDC_CPU_TRY(checkTensor(name, "result", out));
    SHARDC_CPU_TRY(checkDType(name, "result", out, input.dtype));
    Shape expected = input.shape;
    expected[size_t(axis)] = out.shape.size() == expected.size() ? out.shape[size_t(axis)] : -1;
    if (out.shape != expected)
      return fail(name, "result " + str(out.shape) + " does not match " + str(input.shape) +
                            " outside axis " + std::to_string(axis));
    total += out.shape[size_t(axis)];
  }
  if (total != input.shape[size_t(axis)])
    return fail(name, "result sizes add up to " + std::to_string(total) + " but axis " +
                          std::to_string(axis) + " of " + str(input.shape) + " has " +
                          std::to_string(input.shape[size_t(axis)]));
  if (context.checkOnly || input.numel() == 0)
    return Status::success();
  const Shape inputStrides = rowMajorStrides(input.shape);
  int64_t offset = 0;
  for (const TensorView &out : outs) {
    SHARDC_CPU_TRY(copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data,
                               offset * inputStrides[size_t(axis)], inputStrides, out.shape,
                               dtypeSize(input.dtype), context.stream));
    offset += out.shape[size_t(axis)];
  }
  return Status::success();
}

Status expand(const TensorView &input, const TensorView &out, const LaunchContext &context) {
  const char *name = "expand";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  if (!broadcastsTo(input.shape, out.shape))
    return fail(name, "input " + str(input.shape) + " does not broadcast to the result " +
                          str(out.shape));
  if (context.checkOnly)
    return Status::success();
  return copyStrided(name, out.data, 0, rowMajorStrides(out.shape), input.data, 0,
                     broadcastStrides(input.shape, out.shape), out.shape, dtypeSize(out.dtype),
                     context.stream);
}

Status gather(const TensorView &data, const TensorView &indices, int64_t axis,
              const TensorView &out, const LaunchContext &context) {
  const char *name = "gather";
  SHARDC_CPU_TRY(checkTensor(name, "data", data));
  SHARDC_CPU_TRY(checkTensor(name, "indices", indices));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  SHARDC_CPU_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_CPU_TRY(checkAxis(name, axis, data.shape.size()));
  Shape expected(data.shape.begin(), data.shape.begin() + axis);
  expected.insert(expected.end(), indices.shape.begin(), indices.shape.end());
  expected.insert(expected.end(), data.shape.begin() + axis + 1, data.shape.end());
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  SHARDC_CPU_TRY(checkIndexType(name, indices));
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
  SHARDC_CPU_TRY(checkTensor(name, "data", data));
  SHARDC_CPU_TRY(checkTensor(name, "indices", indices));
  SHARDC_CPU_TRY(checkTensor(name, "updates", updates));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  SHARDC_CPU_TRY(checkDType(name, "updates", updates, data.dtype));
  SHARDC_CPU_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_CPU_TRY(checkShape(name, "result", out, data.shape));
  SHARDC_CPU_TRY(checkAxis(name, axis, data.shape.size()));
  if (indices.shape != updates.shape)
    return fail(name, "indices and updates shapes differ; expected " + str(indices.shape) +
                          " but got " + str(updates.shape));
  bool fits = indices.shape.size() == data.shape.size();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  if (!fits)
    return fail(name, "indices " + str(indices.shape) + " do not fit data " + str(data.shape) +
                          " outside axis " + std::to_string(axis));
  if (data.dtype == DType::Bool && reduction != ScatterReduction::None)
    return fail(name, std::string("reduction ") + cpu::scatterReductionName(reduction) +
                          " needs integer or float data but got bool");
  SHARDC_CPU_TRY(checkIndexType(name, indices));
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
  SHARDC_CPU_TRY(toIndexMap(name, Walk<2>::make(lineShape, {indexStrides, dataStrides}), args.map));
  if (context.checkOnly)
    return Status::success();
  if (out.data != data.data && data.numel() > 0)
    SHARDC_CUDA_TRY(cudaMemcpyAsync(out.data, data.data, data.bytes(), cudaMemcpyDeviceToDevice,
                                    context.stream));
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
  SHARDC_CPU_TRY(checkTensor(name, "input", input));
  SHARDC_CPU_TRY(checkTensor(name, "result", out));
  SHARDC_CPU_TRY(checkDType(name, "result", out, input.dtype));
  SHARDC_CPU_TRY(checkShape(name, "result", out, input.shape));
  if (input.shape.size() < 2)
    return fail(name, "needs a tensor of rank >= 2 but got " + str(input.shape));
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
