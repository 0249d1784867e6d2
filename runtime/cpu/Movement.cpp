//===- Movement.cpp - reshape/copy, transpose, slice, concat, split, expand ===//
#include "runtime/cpu/Movement.h"

#include "runtime/cpu/Checks.h"
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

/// out's bytes = input's, of equal size, split by pages over the threads.
void copyBytes(const TensorView &input, const TensorView &out) {
  if (input.data == out.data || input.numel() == 0)
    return;
  const size_t bytes = input.bytes();
  const int64_t chunks = int64_t(bytes / 4096) + 1; // pages, to split the copy
  parallelFor(chunks, 4096, [&](int64_t begin, int64_t end) {
    const size_t from = size_t(begin) * bytes / size_t(chunks);
    const size_t to = size_t(end) * bytes / size_t(chunks);
    std::memcpy(static_cast<char *>(out.data) + from,
                static_cast<const char *>(input.data) + from, to - from);
  });
}

} // namespace

Status reshape(const TensorView &input, const TensorView &out) {
  const char *name = "reshape";
  SHARDC_KERNEL_TRY(checkSameType(name, input, out));
  if (input.numel() != out.numel())
    return fail(name, "element counts differ; " + str(input.shape) + " has " +
                          std::to_string(input.numel()) + " but " + str(out.shape) + " has " +
                          std::to_string(out.numel()));
  copyBytes(input, out);
  return Status::success();
}

Status copy(const TensorView &input, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkCopy(input, out));
  copyBytes(input, out);
  return Status::success();
}

Status transpose(const TensorView &input, const std::vector<int64_t> &perm,
                 const TensorView &out) {
  Shape strides;
  SHARDC_KERNEL_TRY(checkTranspose(input, perm, out, strides));
  if (out.numel() > 0)
    gatherStrided(input, 0, strides, out);
  return Status::success();
}

Status slice(const TensorView &input, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &steps,
             const TensorView &out) {
  int64_t base;
  Shape strides;
  SHARDC_KERNEL_TRY(checkSlice(input, starts, ends, steps, out, base, strides));
  if (out.numel() > 0)
    gatherStrided(input, base, strides, out);
  return Status::success();
}

Status concat(ViewList inputs, int64_t axis, const TensorView &out) {
  SHARDC_KERNEL_TRY(checkConcat(inputs, axis, out));
  if (out.numel() == 0)
    return Status::success();
  const Shape &first = inputs[0].shape;
  const int64_t outer = product(first, 0, size_t(axis));
  const int64_t inner = product(first, size_t(axis) + 1, first.size());
  const int64_t whole = out.shape[size_t(axis)] * inner;
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
  SHARDC_KERNEL_TRY(checkSplit(input, axis, outs));
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
  SHARDC_KERNEL_TRY(checkExpand(input, out));
  if (out.numel() > 0)
    gatherStrided(input, 0, broadcastStrides(input.shape, out.shape), out);
  return Status::success();
}

} // namespace shardc::rt::cpu
