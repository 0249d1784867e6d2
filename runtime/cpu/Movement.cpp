//===- Movement.cpp - reshape/copy, transpose, slice, concat, split, expand ===//
#include "runtime/cpu/Movement.h"

#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cstring>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// out = input read through `strides` from `base` (elements).
void gatherStrided(const TensorView &input, int64_t base, const Shape &strides,
                   const TensorView &out) {
  const Walk<2> walk = Walk<2>::make(out.shape, {rowMajorStrides(out.shape), strides});
  stridedCopy(dtypeSize(out.dtype), out.data, input.data, base, walk, out.numel());
}

/// ceil(a / b) for b != 0.
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t quotient = a / b, remainder = a % b;
  if (remainder != 0 && ((remainder > 0) == (b > 0)))
    ++quotient;
  return quotient;
}

Status checkSameType(const char *op, const TensorView &input, const TensorView &out) {
  SHARDC_CPU_TRY(checkTensor(op, "input", input));
  SHARDC_CPU_TRY(checkTensor(op, "result", out));
  return checkDType(op, "result", out, input.dtype);
}

/// Copies [outer][piece] blocks between a tensor viewed as [outer, whole]
/// and pieces of it at `offset` within `whole`: the loop of concat and split.
void copyBlocks(int64_t outer, int64_t piece, int64_t whole, int64_t offset,
                size_t elementSize, const void *src, void *dst, bool intoWhole) {
  const size_t bytes = size_t(piece) * elementSize;
  parallelFor(outer, piece, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const size_t wholeAt = size_t(o * whole + offset) * elementSize;
      const size_t pieceAt = size_t(o * piece) * elementSize;
      if (intoWhole)
        std::memcpy(static_cast<char *>(dst) + wholeAt,
                    static_cast<const char *>(src) + pieceAt, bytes);
      else
        std::memcpy(static_cast<char *>(dst) + pieceAt,
                    static_cast<const char *>(src) + wholeAt, bytes);
    }
  });
}

} // namespace

Status copy(const TensorView &input, const TensorView &out) {
  const char *name = "reshape";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  if (input.numel() != out.numel())
    return fail(name, "element counts differ; " + str(input.shape) + " has " +
                          std::to_string(input.numel()) + " but " + str(out.shape) + " has " +
                          std::to_string(out.numel()));
  if (input.data == out.data || input.numel() == 0)
    return Status::success();
  const size_t bytes = input.bytes();
  const int64_t chunks = int64_t(bytes / 4096) + 1; // pages, to split the copy
  parallelFor(chunks, 4096, [&](int64_t begin, int64_t end) {
    const size_t from = size_t(begin) * bytes / size_t(chunks);
    const size_t to = size_t(end) * bytes / size_t(chunks);
    std::memcpy(static_cast<char *>(out.data) + from,
                static_cast<const char *>(input.data) + from, to - from);
  });
  return Status::success();
}

Status transpose(const TensorView &input, const std::vector<int64_t> &perm,
                 const TensorView &out) {
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
    return fail(name, "perm " + str(perm) + " is not a permutation of the " +
                          std::to_string(rank) + " dims of " + str(input.shape));
  Shape expected(rank), strides(rank);
  const Shape inputStrides = rowMajorStrides(input.shape);
  for (size_t i = 0; i < rank; ++i) {
    expected[i] = input.shape[size_t(perm[i])];
    strides[i] = inputStrides[size_t(perm[i])];
  }
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (out.numel() > 0)
    gatherStrided(input, 0, strides, out);
  return Status::success();
}

Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out) {
  const char *name = "slice";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  const size_t rank = input.shape.size();
  if (starts.size() != rank || ends.size() != rank || steps.size() != rank)
    return fail(name, "needs one start, end and step per dim of " + str(input.shape) +
                          " but got " + std::to_string(starts.size()) + ", " +
                          std::to_string(ends.size()) + " and " + std::to_string(steps.size()));
  Shape expected(rank), strides(rank);
  const Shape inputStrides = rowMajorStrides(input.shape);
  int64_t base = 0;
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
    const int64_t count = std::max<int64_t>(ceilDiv(end - start, step), 0);
    expected[d] = count;
    if (count == 0)
      continue;
    const int64_t last = start + (count - 1) * step;
    if (start < 0 || start >= dim || last < 0 || last >= dim)
      return fail(name, where + " from " + std::to_string(start) + " to " +
                            std::to_string(end) + " by " + std::to_string(step) +
                            " reads outside the dim");
    base += start * inputStrides[d];
    // With one pick the step is never taken (and may be huge: skip the
    // product); with more, |step| < dim bounds it.
    strides[d] = count > 1 ? step * inputStrides[d] : 0;
  }
  SHARDC_CPU_TRY(checkShape(name, "result", out, expected));
  if (out.numel() > 0)
    gatherStrided(input, base, strides, out);
  return Status::success();
}

Status concat(ViewList inputs, int64_t axis, const TensorView &out) {
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
  if (out.numel() == 0)
    return Status::success();
  const int64_t outer = product(first, 0, size_t(axis));
  const int64_t inner = product(first, size_t(axis) + 1, first.size());
  const int64_t whole = expected[size_t(axis)] * inner;
  int64_t offset = 0;
  for (const TensorView &input : inputs) {
    const int64_t piece = input.shape[size_t(axis)] * inner;
    if (piece > 0)
      copyBlocks(outer, piece, whole, offset, dtypeSize(out.dtype), input.data, out.data,
                 /*intoWhole=*/true);
    offset += piece;
  }
  return Status::success();
}

Status split(const TensorView &input, int64_t axis, ViewList outs) {
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
  if (input.numel() == 0)
    return Status::success();
  const int64_t outer = product(input.shape, 0, size_t(axis));
  const int64_t inner = product(input.shape, size_t(axis) + 1, input.shape.size());
  const int64_t whole = input.shape[size_t(axis)] * inner;
  int64_t offset = 0;
  for (const TensorView &out : outs) {
    const int64_t piece = out.shape[size_t(axis)] * inner;
    if (piece > 0)
      copyBlocks(outer, piece, whole, offset, dtypeSize(input.dtype), input.data, out.data,
                 /*intoWhole=*/false);
    offset += piece;
  }
  return Status::success();
}

Status expand(const TensorView &input, const TensorView &out) {
  const char *name = "expand";
  SHARDC_CPU_TRY(checkSameType(name, input, out));
  if (!broadcastsTo(input.shape, out.shape))
    return fail(name, "input " + str(input.shape) + " does not broadcast to the result " +
                          str(out.shape));
  if (out.numel() > 0)
    gatherStrided(input, 0, broadcastStrides(input.shape, out.shape), out);
  return Status::success();
}

} // namespace shardc::rt::cpu
