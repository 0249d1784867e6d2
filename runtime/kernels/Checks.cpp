//===- Checks.cpp - Operand checks both backends run before a kernel ------===//
#include "runtime/kernels/Checks.h"

#include "runtime/core/SliceCount.h"

#include <algorithm>
#include <string>

namespace shardc::rt::kernels {

//===----------------------------------------------------------------------===//
// Movement and indexing
//===----------------------------------------------------------------------===//

Status checkSameType(const char *op, const TensorView &input, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkTensor(op, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(op, "result", out));
  return checkDType(op, "result", out, input.dtype);
}

Status checkTranspose(const TensorView &input, const std::vector<int64_t> &perm,
                      const TensorView &out, Shape &strides) {
  const char *name = "transpose";
  SHARDC_KERNEL_TRY(checkSameType(name, input, out));
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
  Shape expected(rank);
  strides.assign(rank, 0);
  const Shape inputStrides = rowMajorStrides(input.shape);
  for (size_t i = 0; i < rank; ++i) {
    expected[i] = input.shape[size_t(perm[i])];
    strides[i] = inputStrides[size_t(perm[i])];
  }
  return checkShape(name, "result", out, expected);
}

Status checkSlice(const TensorView &input, const std::vector<int64_t> &starts,
                  const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
                  const TensorView &out, int64_t &base, Shape &strides) {
  const char *name = "slice";
  SHARDC_KERNEL_TRY(checkSameType(name, input, out));
  const size_t rank = input.shape.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return fail(name, "needs one start, end and step per dim of " + str(input.shape) + " but got " +
                          std::to_string(starts.size()) + ", " + std::to_string(ends.size()) +
                          " and " + std::to_string(steps.size()));
  Shape expected(rank);
  strides.assign(rank, 0);
  const Shape inputStrides = rowMajorStrides(input.shape);
  base = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = input.shape[d], start = starts[d], end = ends[d], step = steps[d];
    const std::string where = "dim " + std::to_string(d) + " (size " + std::to_string(dim) + ")";
    if (step == 0)
      return fail(name, where + " has step 0");
    // Bounding start and end first keeps the count arithmetic from overflowing.
    if (start < -1 || start > dim || end < -1 || end > dim)
      return fail(name, where + " has start " + std::to_string(start) + " and end " +
                            std::to_string(end) + "; expected values in [-1, " +
                            std::to_string(dim) + "]");
    const int64_t count = sliceCount(start, end, step);
    expected[d] = count;
    if (count == 0)
      continue;
    const int64_t last = start + (count - 1) * step;
    if (start < 0 || start >= dim || last < 0 || last >= dim)
      return fail(name, where + " from " + std::to_string(start) + " to " + std::to_string(end) +
                            " by " + std::to_string(step) + " reads outside the dim");
    base += start * inputStrides[d];
    // With one pick the step is never taken (and may be huge: skip the
    // product); with more, |step| < dim bounds it.
    strides[d] = count > 1 ? step * inputStrides[d] : 0;
  }
  return checkShape(name, "result", out, expected);
}

Status checkConcat(ViewList inputs, int64_t axis, const TensorView &out) {
  const char *name = "concat";
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (inputs.size() == 0)
    return fail(name, "needs at least one input");
  const Shape &first = inputs[0].shape;
  SHARDC_KERNEL_TRY(checkAxis(name, axis, first.size()));
  Shape expected = first;
  expected[size_t(axis)] = 0;
  for (const TensorView &input : inputs) {
    SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
    SHARDC_KERNEL_TRY(checkDType(name, "input", input, out.dtype));
    bool fits = input.shape.size() == first.size();
    for (size_t d = 0; fits && d < first.size(); ++d)
      fits = int64_t(d) == axis || input.shape[d] == first[d];
    if (!fits)
      return fail(name, "input " + str(input.shape) + " does not match " + str(first) +
                            " outside axis " + std::to_string(axis));
    expected[size_t(axis)] += input.shape[size_t(axis)];
  }
  return checkShape(name, "result", out, expected);
}

Status checkSplit(const TensorView &input, int64_t axis, ViewList outs) {
  const char *name = "split";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, input.shape.size()));
  int64_t total = 0;
  for (const TensorView &out : outs) {
    SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
    SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
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
  return Status::success();
}

Status checkExpand(const TensorView &input, const TensorView &out) {
  const char *name = "expand";
  SHARDC_KERNEL_TRY(checkSameType(name, input, out));
  if (!broadcastsTo(input.shape, out.shape))
    return fail(name, "input " + str(input.shape) + " does not broadcast to the result " +
                          str(out.shape));
  return Status::success();
}

Status checkCopy(const TensorView &input, const TensorView &out) {
  const char *name = "copy";
  SHARDC_KERNEL_TRY(checkSameType(name, input, out));
  return checkShape(name, "result", out, input.shape);
}

Status checkIndexType(const char *op, const TensorView &indices) {
  if (indices.dtype != DType::I64 && indices.dtype != DType::I32)
    return fail(op,
                std::string("indices must be int32 or int64 but got ") + dtypeName(indices.dtype));
  return Status::success();
}

namespace {

/// The gathers' and scatters' tensors well-formed, in the order they are
/// named: data, indices, updates (scatters only), result.
Status checkIndexTensors(const char *op, const TensorView &data, const TensorView &indices,
                         const TensorView *updates, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkTensor(op, "data", data));
  SHARDC_KERNEL_TRY(checkTensor(op, "indices", indices));
  if (updates)
    SHARDC_KERNEL_TRY(checkTensor(op, "updates", *updates));
  return checkTensor(op, "result", out);
}

/// gather_elements' and scatter_elements' rule: indices of data's rank, no
/// larger than data in any dim but `axis`.
Status checkFitsOutsideAxis(const char *op, const TensorView &indices, const TensorView &data,
                            int64_t axis) {
  bool fits = indices.shape.size() == data.shape.size();
  for (size_t d = 0; fits && d < data.shape.size(); ++d)
    fits = int64_t(d) == axis || indices.shape[d] <= data.shape[d];
  if (!fits)
    return fail(op, "indices " + str(indices.shape) + " do not fit data " + str(data.shape) +
                        " outside axis " + std::to_string(axis));
  return Status::success();
}

/// The scatters' reductions other than none need numbers, not bool.
Status checkReductionType(const char *op, const TensorView &data, ScatterReduction reduction) {
  if (data.dtype == DType::Bool && reduction != ScatterReduction::None)
    return fail(op, std::string("reduction ") + scatterReductionName(reduction) +
                        " needs integer or float data but got bool");
  return Status::success();
}

/// The tuple layout of data's dims [first, first + k) (see IndexTupleDims).
void tupleDims(const TensorView &data, size_t first, size_t k, IndexTupleDims &dims) {
  const Shape strides = rowMajorStrides(data.shape);
  dims.dims.assign(data.shape.begin() + first, data.shape.begin() + first + k);
  dims.strides.assign(strides.begin() + first, strides.begin() + first + k);
  dims.slice = product(data.shape, first + k, data.shape.size());
  dims.batches = product(data.shape, 0, first);
  dims.batchStride = product(data.shape, first, data.shape.size());
}

} // namespace

Status checkGather(const TensorView &data, const TensorView &indices, int64_t axis,
                   const TensorView &out) {
  const char *name = "gather";
  SHARDC_KERNEL_TRY(checkIndexTensors(name, data, indices, nullptr, out));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, data.shape.size()));
  Shape expected(data.shape.begin(), data.shape.begin() + axis);
  expected.insert(expected.end(), indices.shape.begin(), indices.shape.end());
  expected.insert(expected.end(), data.shape.begin() + axis + 1, data.shape.end());
  return checkShape(name, "result", out, expected);
}

Status checkScatterElements(const TensorView &data, const TensorView &indices,
                            const TensorView &updates, int64_t axis, ScatterReduction reduction,
                            const TensorView &out) {
  const char *name = "scatter_elements";
  SHARDC_KERNEL_TRY(checkIndexTensors(name, data, indices, &updates, out));
  SHARDC_KERNEL_TRY(checkDType(name, "updates", updates, data.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, data.shape));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, data.shape.size()));
  if (indices.shape != updates.shape)
    return fail(name, "indices and updates shapes differ; expected " + str(indices.shape) +
                          " but got " + str(updates.shape));
  SHARDC_KERNEL_TRY(checkFitsOutsideAxis(name, indices, data, axis));
  return checkReductionType(name, data, reduction);
}

Status checkGatherElements(const TensorView &data, const TensorView &indices, int64_t axis,
                           const TensorView &out) {
  const char *name = "gather_elements";
  SHARDC_KERNEL_TRY(checkIndexTensors(name, data, indices, nullptr, out));
  SHARDC_KERNEL_TRY(checkIndexType(name, indices));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, data.shape.size()));
  SHARDC_KERNEL_TRY(checkFitsOutsideAxis(name, indices, data, axis));
  return checkShape(name, "result", out, indices.shape);
}

Status checkGatherND(const TensorView &data, const TensorView &indices, int64_t batchDims,
                     const TensorView &out, IndexTupleDims &dims) {
  const char *name = "gather_nd";
  SHARDC_KERNEL_TRY(checkIndexTensors(name, data, indices, nullptr, out));
  SHARDC_KERNEL_TRY(checkIndexType(name, indices));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, data.dtype));
  const int64_t rank = int64_t(data.shape.size()), indexRank = int64_t(indices.shape.size());
  if (rank < 1 || indexRank < 1)
    return fail(name, "needs data and indices of rank >= 1 but got " + str(data.shape) + " and " +
                          str(indices.shape));
  if (batchDims < 0 || batchDims >= std::min(rank, indexRank))
    return fail(name, "batch_dims out of range; expected 0 <= batch_dims < " +
                          std::to_string(std::min(rank, indexRank)) + " but got " +
                          std::to_string(batchDims));
  const size_t b = size_t(batchDims);
  if (!std::equal(data.shape.begin(), data.shape.begin() + batchDims, indices.shape.begin()))
    return fail(name, "batch dims of data " + str(data.shape) + " and indices " +
                          str(indices.shape) + " differ");
  const int64_t k = indices.shape.back();
  if (k < 1 || k > rank - batchDims)
    return fail(name, "index tuples out of range; expected 1 <= indices.shape[-1] <= " +
                          std::to_string(rank - batchDims) + " but got " + std::to_string(k));
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + batchDims + k, data.shape.end());
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, expected));
  tupleDims(data, b, size_t(k), dims);
  dims.tuples = product(indices.shape, b, indices.shape.size() - 1);
  return Status::success();
}

Status checkScatterND(const TensorView &data, const TensorView &indices, const TensorView &updates,
                      ScatterReduction reduction, const TensorView &out, IndexTupleDims &dims) {
  const char *name = "scatter_nd";
  SHARDC_KERNEL_TRY(checkIndexTensors(name, data, indices, &updates, out));
  SHARDC_KERNEL_TRY(checkIndexType(name, indices));
  SHARDC_KERNEL_TRY(checkDType(name, "updates", updates, data.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, data.dtype));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, data.shape));
  if (data.shape.empty() || indices.shape.empty())
    return fail(name, "needs data and indices of rank >= 1 but got " + str(data.shape) + " and " +
                          str(indices.shape));
  const int64_t k = indices.shape.back();
  if (k < 0 || k > int64_t(data.shape.size()))
    return fail(name, "index tuples out of range; expected 0 <= indices.shape[-1] <= " +
                          std::to_string(data.shape.size()) + " but got " + std::to_string(k));
  Shape expected(indices.shape.begin(), indices.shape.end() - 1);
  expected.insert(expected.end(), data.shape.begin() + k, data.shape.end());
  SHARDC_KERNEL_TRY(checkShape(name, "updates", updates, expected));
  SHARDC_KERNEL_TRY(checkReductionType(name, data, reduction));
  tupleDims(data, 0, size_t(k), dims);
  dims.tuples = product(indices.shape, 0, indices.shape.size() - 1);
  return Status::success();
}

Status checkTrilu(const TensorView &input, const TensorView &out) {
  const char *name = "trilu";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  if (input.shape.size() < 2)
    return fail(name, "needs a tensor of rank >= 2 but got " + str(input.shape));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

Status checkMatMul(const TensorView &lhs, const TensorView &rhs, const TensorView &out,
                   MatMulDims &dims, bool transposeLhs, bool transposeRhs) {
  const char *name = "matmul";
  SHARDC_KERNEL_TRY(checkTensor(name, "lhs", lhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "rhs", rhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkDType(name, "rhs", rhs, lhs.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, lhs.dtype));
  if (lhs.dtype == DType::Bool)
    return fail(name, "needs integer or float operands but got bool");
  if (lhs.shape.empty() || rhs.shape.empty())
    return fail(name,
                "needs operands of rank >= 1 but got " + str(lhs.shape) + " and " + str(rhs.shape));
  // Promote 1-D operands to matrices; that dim is then absent from out.
  const bool lhsVector = lhs.shape.size() == 1, rhsVector = rhs.shape.size() == 1;
  if ((transposeLhs && lhsVector) || (transposeRhs && rhsVector))
    return fail(name, "a transposed operand needs rank >= 2 but got " + str(lhs.shape) +
                          " and " + str(rhs.shape));
  // A transposed operand is read as its stored matrices with rows and columns swapped.
  auto swapped = [](Shape shape) {
    std::swap(shape[shape.size() - 2], shape.back());
    return shape;
  };
  const Shape a = lhsVector ? Shape{1, lhs.shape[0]} : transposeLhs ? swapped(lhs.shape) : lhs.shape;
  const Shape b = rhsVector ? Shape{rhs.shape[0], 1} : transposeRhs ? swapped(rhs.shape) : rhs.shape;
  dims.m = a[a.size() - 2];
  dims.k = a.back();
  dims.n = b.back();
  if (b[b.size() - 2] != dims.k)
    return fail(name, "contracted dims differ; lhs " + str(lhs.shape) + " has " +
                          std::to_string(dims.k) + " but rhs " + str(rhs.shape) + " has " +
                          std::to_string(b[b.size() - 2]));
  dims.aBatch.assign(a.begin(), a.end() - 2);
  dims.bBatch.assign(b.begin(), b.end() - 2);
  dims.batch.clear();
  if (!broadcastShapes(dims.aBatch, dims.bBatch, dims.batch))
    return fail(name, "batch dims " + str(dims.aBatch) + " and " + str(dims.bBatch) +
                          " do not broadcast");
  Shape expected = dims.batch;
  if (!lhsVector)
    expected.push_back(dims.m);
  if (!rhsVector)
    expected.push_back(dims.n);
  return checkShape(name, "result", out, expected);
}

Status checkLinear(const TensorView &input, const TensorView &weight, const TensorView *bias,
                   bool transposeWeight, const TensorView &out, LinearDims &dims) {
  const char *name = "linear";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "weight", weight));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (!isFloatType(input.dtype))
    return fail(name, std::string("needs a float input but got ") + dtypeName(input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "weight", weight, input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  if (input.shape.empty() || weight.shape.size() != 2)
    return fail(name, "needs an input of rank >= 1 and a 2-D weight but got " + str(input.shape) +
                          " and " + str(weight.shape));
  dims.k = weight.shape[transposeWeight ? 1 : 0];
  dims.n = weight.shape[transposeWeight ? 0 : 1];
  if (input.shape.back() != dims.k)
    return fail(name, "input features differ from the weight's; expected " +
                          std::to_string(dims.k) + " but got " +
                          std::to_string(input.shape.back()));
  if (bias) {
    SHARDC_KERNEL_TRY(checkTensor(name, "bias", *bias));
    SHARDC_KERNEL_TRY(checkDType(name, "bias", *bias, input.dtype));
    SHARDC_KERNEL_TRY(checkShape(name, "bias", *bias, Shape{dims.n}));
  }
  Shape expected = input.shape;
  expected.back() = dims.n;
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, expected));
  dims.m = product(input.shape, 0, input.shape.size() - 1);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

Status checkAlongAxis(const char *op, const TensorView &input, int64_t axis,
                      const TensorView &out, TypeCheck extra) {
  SHARDC_KERNEL_TRY(checkTensor(op, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(op, "result", out));
  if (!isFloatType(input.dtype))
    return fail(op, std::string("needs a float input but got ") + dtypeName(input.dtype));
  if (extra)
    SHARDC_KERNEL_TRY(extra(op, input));
  SHARDC_KERNEL_TRY(checkDType(op, "result", out, input.dtype));
  SHARDC_KERNEL_TRY(checkShape(op, "result", out, input.shape));
  return checkAxis(op, axis, input.shape.size());
}

Status checkReduce(ReduceOp op, const TensorView &input, const std::vector<int64_t> &axes,
                   bool keepdims, const TensorView &out, TypeCheck extra,
                   std::vector<bool> &reduced) {
  const char *name = reduceOpName(op);
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (!isFloatType(input.dtype) && !isIntType(input.dtype))
    return fail(name,
                std::string("needs an integer or float input but got ") + dtypeName(input.dtype));
  if (extra)
    SHARDC_KERNEL_TRY(extra(name, input));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  const size_t rank = input.shape.size();
  reduced.assign(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    SHARDC_KERNEL_TRY(checkAxis(name, axes[i], rank));
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
  return checkShape(name, "result", out, expected);
}

Status checkCumSum(const TensorView &input, int64_t axis, const TensorView &out, ScanDims &dims) {
  const char *name = "cumsum";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (!isFloatType(input.dtype) && input.dtype != DType::I32 && input.dtype != DType::I64)
    return fail(name, std::string("needs an int32, int64 or float input but got ") +
                          dtypeName(input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, input.shape.size()));
  dims.outer = product(input.shape, 0, size_t(axis));
  dims.dim = input.shape[size_t(axis)];
  dims.inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  return Status::success();
}

Status checkTopK(const TensorView &input, int64_t k, int64_t axis, const TensorView &values,
                 const TensorView &indices) {
  const char *name = "topk";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "values", values));
  SHARDC_KERNEL_TRY(checkTensor(name, "indices", indices));
  SHARDC_KERNEL_TRY(checkAxis(name, axis, input.shape.size()));
  const int64_t dim = input.shape[size_t(axis)];
  if (k < 0 || k > dim)
    return fail(name, "k out of range; expected 0 <= k <= " + std::to_string(dim) + " but got " +
                          std::to_string(k));
  Shape expected = input.shape;
  expected[size_t(axis)] = k;
  SHARDC_KERNEL_TRY(checkDType(name, "values", values, input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "indices", indices, DType::I64));
  SHARDC_KERNEL_TRY(checkShape(name, "values", values, expected));
  return checkShape(name, "indices", indices, expected);
}

//===----------------------------------------------------------------------===//
// Attention and rotary
//===----------------------------------------------------------------------===//

Status checkRotary(const TensorView &input, const TensorView &cos, const TensorView &sin,
                   const TensorView &out, TypeCheck extra, RotaryDims &dims) {
  const char *name = "rotary";
  SHARDC_KERNEL_TRY(checkTensor(name, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(name, "cos", cos));
  SHARDC_KERNEL_TRY(checkTensor(name, "sin", sin));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (!isFloatType(input.dtype))
    return fail(name, std::string("needs a float input but got ") + dtypeName(input.dtype));
  if (extra)
    SHARDC_KERNEL_TRY(extra(name, input));
  SHARDC_KERNEL_TRY(checkDType(name, "cos", cos, input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "sin", sin, input.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, input.dtype));
  SHARDC_KERNEL_TRY(checkShape(name, "result", out, input.shape));
  if (cos.shape != sin.shape)
    return fail(name,
                "cos and sin shapes differ; got " + str(cos.shape) + " and " + str(sin.shape));
  if (input.shape.empty() || cos.shape.empty())
    return fail(name, "input and cos must have rank >= 1");
  dims.features = input.shape.back();
  dims.rotated = cos.shape.back();
  if (dims.rotated % 2 != 0 || dims.rotated > dims.features || dims.rotated == 0)
    return fail(name, "rotated features must be even, non-zero and at most " +
                          std::to_string(dims.features) + "; got " + std::to_string(dims.rotated));
  dims.rowsShape.assign(input.shape.begin(), input.shape.end() - 1);
  dims.tableShape.assign(cos.shape.begin(), cos.shape.end() - 1);
  if (!broadcastsTo(dims.tableShape, dims.rowsShape))
    return fail(name, "cos does not broadcast to the input; expected " + str(dims.rowsShape) +
                          " but got " + str(dims.tableShape));
  return Status::success();
}

Status checkAttention(const TensorView &query, const TensorView &key, const TensorView &value,
                      const TensorView &out, TypeCheck extra, AttentionDims &dims) {
  const char *name = "attention";
  SHARDC_KERNEL_TRY(checkTensor(name, "query", query));
  SHARDC_KERNEL_TRY(checkTensor(name, "key", key));
  SHARDC_KERNEL_TRY(checkTensor(name, "value", value));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  if (!isFloatType(query.dtype))
    return fail(name, std::string("needs float operands but got ") + dtypeName(query.dtype));
  if (extra)
    SHARDC_KERNEL_TRY(extra(name, query));
  SHARDC_KERNEL_TRY(checkDType(name, "key", key, query.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "value", value, query.dtype));
  SHARDC_KERNEL_TRY(checkDType(name, "result", out, query.dtype));
  const size_t rank = query.shape.size();
  if (rank < 3 || key.shape.size() != rank || value.shape.size() != rank)
    return fail(name, "query, key and value must share a rank >= 3; got " + str(query.shape) +
                          ", " + str(key.shape) + " and " + str(value.shape));
  dims.batchShape.assign(query.shape.begin(), query.shape.end() - 3);
  const Shape kBatch(key.shape.begin(), key.shape.end() - 3);
  const Shape vBatch(value.shape.begin(), value.shape.end() - 3);
  if (kBatch != dims.batchShape || vBatch != dims.batchShape)
    return fail(name, "batch dims differ; expected " + str(dims.batchShape) +
                          " for key and value but got " + str(kBatch) + " and " + str(vBatch));
  dims.batch = numElements(dims.batchShape);
  dims.headsQ = query.shape[rank - 3];
  dims.seqQ = query.shape[rank - 2];
  dims.headDim = query.shape[rank - 1];
  dims.headsKv = key.shape[rank - 3];
  dims.seqK = key.shape[rank - 2];
  dims.valueDim = value.shape[rank - 1];
  if (value.shape[rank - 3] != dims.headsKv)
    return fail(name, "key and value head counts differ; expected " + std::to_string(dims.headsKv) +
                          " but got " + std::to_string(value.shape[rank - 3]));
  if (dims.headsKv == 0 || dims.headsQ % dims.headsKv != 0)
    return fail(name, "query heads must be a multiple of key/value heads; got " +
                          std::to_string(dims.headsQ) + " and " + std::to_string(dims.headsKv));
  if (key.shape[rank - 1] != dims.headDim)
    return fail(name, "query and key head sizes differ; expected " + std::to_string(dims.headDim) +
                          " but got " + std::to_string(key.shape[rank - 1]));
  if (value.shape[rank - 2] != dims.seqK)
    return fail(name, "key and value sequence lengths differ; expected " +
                          std::to_string(dims.seqK) + " but got " +
                          std::to_string(value.shape[rank - 2]));
  Shape expected = dims.batchShape;
  expected.insert(expected.end(), {dims.headsQ, dims.seqQ, dims.valueDim});
  return checkShape(name, "result", out, expected);
}

Status checkAttentionMask(const TensorView &query, const TensorView &mask,
                          const AttentionDims &dims, Shape &strides) {
  const char *name = "attention";
  SHARDC_KERNEL_TRY(checkTensor(name, "mask", mask));
  if (mask.dtype != DType::Bool && mask.dtype != query.dtype)
    return fail(name, std::string("mask must be bool or of the query's element type ") +
                          dtypeName(query.dtype) + " but got " + dtypeName(mask.dtype));
  Shape scores = dims.batchShape;
  scores.insert(scores.end(), {dims.headsQ, dims.seqQ, dims.seqK});
  if (!broadcastsTo(mask.shape, scores))
    return fail(name, "mask does not broadcast to the scores; expected " + str(scores) +
                          " but got " + str(mask.shape));
  strides = broadcastStrides(mask.shape, scores);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Status checkBinary(BinaryOp op, const TensorView &lhs, const TensorView &rhs,
                   const TensorView &out) {
  const char *name = binaryOpName(op);
  SHARDC_KERNEL_TRY(checkTensor(name, "lhs", lhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "rhs", rhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  const DType type = lhs.dtype;
  const bool logical = op == BinaryOp::And || op == BinaryOp::Or;
  if (logical) {
    if (type != DType::Bool || rhs.dtype != DType::Bool)
      return fail(name, std::string("needs bool operands but got ") + dtypeName(type) + " and " +
                            dtypeName(rhs.dtype));
  } else if (op == BinaryOp::Pow) {
    if (type == DType::Bool || rhs.dtype == DType::Bool)
      return fail(name, std::string("needs integer or float operands but got ") + dtypeName(type) +
                            " and " + dtypeName(rhs.dtype));
  } else if (type != rhs.dtype || type == DType::Bool) {
    return fail(name, std::string("needs integer or float operands of one type but got ") +
                          dtypeName(type) + " and " + dtypeName(rhs.dtype));
  }
  return checkDType(name, "result", out, type);
}

Status checkCompare(const TensorView &lhs, const TensorView &rhs, const TensorView &out) {
  const char *name = "compare";
  SHARDC_KERNEL_TRY(checkTensor(name, "lhs", lhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "rhs", rhs));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkDType(name, "rhs", rhs, lhs.dtype));
  return checkDType(name, "result", out, DType::Bool);
}

Status checkClassify(const char *op, const TensorView &input, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkTensor(op, "input", input));
  SHARDC_KERNEL_TRY(checkTensor(op, "result", out));
  if (!isFloatType(input.dtype))
    return fail(op, std::string("needs a float input but got ") + dtypeName(input.dtype));
  SHARDC_KERNEL_TRY(checkDType(op, "result", out, DType::Bool));
  return checkShape(op, "result", out, input.shape);
}

Status checkWhere(const TensorView &condition, const TensorView &trueValue,
                  const TensorView &falseValue, const TensorView &out) {
  const char *name = "where";
  SHARDC_KERNEL_TRY(checkTensor(name, "condition", condition));
  SHARDC_KERNEL_TRY(checkTensor(name, "true value", trueValue));
  SHARDC_KERNEL_TRY(checkTensor(name, "false value", falseValue));
  SHARDC_KERNEL_TRY(checkTensor(name, "result", out));
  SHARDC_KERNEL_TRY(checkDType(name, "condition", condition, DType::Bool));
  SHARDC_KERNEL_TRY(checkDType(name, "false value", falseValue, trueValue.dtype));
  return checkDType(name, "result", out, trueValue.dtype);
}

} // namespace shardc::rt::kernels
