//===- KernelSupport.cpp - Checks, broadcasting and strided copies --------===//
#include "runtime/cpu/KernelSupport.h"

#include "runtime/cpu/Parallel.h"

#include <cstring>

namespace shardc::rt::cpu::detail {

bool isFloatType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool isIntType(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I16 ||
         dtype == DType::I8 || dtype == DType::U8;
}

Status fail(const char *op, const std::string &message) {
  return Status::error(std::string(op) + ": " + message);
}

Status checkTensor(const char *op, const char *role, const TensorView &tensor) {
  for (int64_t dim : tensor.shape)
    if (dim < 0)
      return fail(op, std::string(role) + " has a negative dim: " + str(tensor.shape));
  if (!tensor.data && tensor.numel() > 0)
    return fail(op, std::string(role) + " " + str(tensor.shape) + " has no data");
  return Status::success();
}

Status checkDType(const char *op, const char *role, const TensorView &tensor,
                  DType expected) {
  if (tensor.dtype == expected)
    return Status::success();
  return fail(op, std::string(role) + " element type differs; expected " +
                      dtypeName(expected) + " but got " + dtypeName(tensor.dtype));
}

Status checkShape(const char *op, const char *role, const TensorView &tensor,
                  const Shape &expected) {
  if (tensor.shape == expected)
    return Status::success();
  return fail(op, std::string(role) + " shape differs; expected " + str(expected) +
                      " but got " + str(tensor.shape));
}

Status checkAxis(const char *op, int64_t axis, size_t rank) {
  if (axis >= 0 && axis < int64_t(rank))
    return Status::success();
  return fail(op, "axis " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(rank));
}

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

bool broadcastShapes(const Shape &a, const Shape &b, Shape &result) {
  const size_t rank = std::max(a.size(), b.size());
  result.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: dim i from the end.
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return false;
    result[rank - 1 - i] = x == 1 ? y : x; // 1 against 0 gives 0
  }
  return true;
}

bool broadcastsTo(const Shape &from, const Shape &to) {
  if (from.size() > to.size())
    return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d])
      return false;
  return true;
}

Shape broadcastStrides(const Shape &from, const Shape &to) {
  Shape strides(to.size(), 0);
  const Shape own = rowMajorStrides(from);
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    strides[lead + d] = from[d] == 1 ? 0 : own[d];
  return strides;
}

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t d = begin; d < end && d < shape.size(); ++d)
    result *= shape[d];
  return result;
}

namespace {

template <typename U>
void stridedCopyAs(U *dst, const U *src, int64_t srcBase, const Walk<2> &walk,
                   int64_t count) {
  const int64_t srcInner = walk.innerStride(1);
  parallelFor(count, 1, [&](int64_t begin, int64_t end) {
    walk.run(begin, end, {0, srcBase},
             [&](const std::array<int64_t, 2> &at, int64_t n) {
               U *out = dst + at[0];
               const U *in = src + at[1];
               if (srcInner == 1) {
                 std::memcpy(out, in, size_t(n) * sizeof(U));
               } else if (srcInner == 0) {
                 std::fill(out, out + n, *in);
               } else {
                 for (int64_t i = 0; i < n; ++i)
                   out[i] = in[i * srcInner];
               }
             });
  });
}

} // namespace

void stridedCopy(size_t elementSize, void *dst, const void *src,
                 int64_t srcBase, const Walk<2> &walk, int64_t count) {
  switch (elementSize) {
  case 1:
    stridedCopyAs(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src),
                  srcBase, walk, count);
    break;
  case 2:
    stridedCopyAs(static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src),
                  srcBase, walk, count);
    break;
  case 4:
    stridedCopyAs(static_cast<uint32_t *>(dst), static_cast<const uint32_t *>(src),
                  srcBase, walk, count);
    break;
  default:
    stridedCopyAs(static_cast<uint64_t *>(dst), static_cast<const uint64_t *>(src),
                  srcBase, walk, count);
    break;
  }
}

} // namespace shardc::rt::cpu::detail
