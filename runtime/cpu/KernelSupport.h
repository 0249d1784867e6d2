//===- KernelSupport.h - Checks, dtype dispatch, strided walks (internal) -*- C++ -*-===//
//
// Internal to the CPU kernels: what every family needs and none owns.
//  - dtype dispatch: one template per kernel, instantiated per storage type
//    (float, double, Half, BFloat16, the integers, Bool8), chosen once per
//    call, never per element;
//  - operand checks that turn a bad call into a Status message;
//  - numpy broadcasting and a strided "walk" that visits an index space in
//    row-major order as runs of its innermost dim, with one offset per
//    operand. Broadcasting, expand, transpose and slice are all such walks
//    (stride 0 repeats, permuted strides transpose, negative strides reverse).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_KERNELSUPPORT_H
#define SHARDC_RUNTIME_CPU_KERNELSUPPORT_H

#include "runtime/core/Tensor.h"
#include "runtime/core/HalfFloat.h"
#include "runtime/cpu/Status.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace shardc::rt::cpu::detail {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Storage of a Bool element: one byte, 0 or 1. A distinct type (not bool,
/// whose other byte values are undefined behaviour to load, nor uint8_t, which
/// U8 uses) so that templates treat it as a truth value.
struct Bool8 {
  uint8_t value;
};

/// The type a float element is computed in: fp32 for F32/F16/BF16, double
/// for F64 (narrowing an F64 tensor to fp32 would lose what F64 is for).
template <typename T> struct Compute { using type = T; };
template <> struct Compute<Half> { using type = float; };
template <> struct Compute<BFloat16> { using type = float; };
template <typename T> using ComputeT = typename Compute<T>::type;

template <typename T>
inline constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
    std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T>; // Bool8 is not

template <typename T> inline ComputeT<T> load(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return toFloat(value);
  else
    return value;
}
template <typename T> inline T store(ComputeT<T> value) {
  if constexpr (std::is_same_v<T, Half>)
    return toHalf(value);
  else if constexpr (std::is_same_v<T, BFloat16>)
    return toBFloat16(value);
  else
    return value;
}

/// Calls fn(T{}) with the storage type of a float dtype; false if not one.
template <typename Fn> bool dispatchFloat(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F32: fn(float{}); return true;
  case DType::F64: fn(double{}); return true;
  case DType::F16: fn(Half{}); return true;
  case DType::BF16: fn(BFloat16{}); return true;
  default: return false;
  }
}

/// Calls fn(T{}) with the storage type of an integer dtype (not Bool).
template <typename Fn> bool dispatchInt(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::I64: fn(int64_t{}); return true;
  case DType::I32: fn(int32_t{}); return true;
  case DType::I16: fn(int16_t{}); return true;
  case DType::I8: fn(int8_t{}); return true;
  case DType::U8: fn(uint8_t{}); return true;
  default: return false;
  }
}

/// Integer or float dtypes (arithmetic), not Bool.
template <typename Fn> bool dispatchNumber(DType dtype, Fn &&fn) {
  return dispatchFloat(dtype, fn) || dispatchInt(dtype, fn);
}

/// Every dtype, Bool as Bool8.
template <typename Fn> void dispatchAll(DType dtype, Fn &&fn) {
  if (dtype == DType::Bool)
    fn(Bool8{});
  else
    dispatchNumber(dtype, fn);
}

/// Calls fn(U{}) with an unsigned integer of the element's size, for kernels
/// that only move elements and so need not know what they mean.
template <typename Fn> void dispatchBySize(DType dtype, Fn &&fn) {
  switch (dtypeSize(dtype)) {
  case 1: fn(uint8_t{}); break;
  case 2: fn(uint16_t{}); break;
  case 4: fn(uint32_t{}); break;
  default: fn(uint64_t{}); break;
  }
}

bool isFloatType(DType dtype);
bool isIntType(DType dtype); // not Bool

/// Integer arithmetic wraps to the element's width (two's complement), like
/// onnxruntime and numpy: computing in uint64_t is defined on overflow and
/// the conversion back keeps the low bits.
template <typename T> inline T wrapTo(uint64_t bits) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(bits));
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// "op: message".
Status fail(const char *op, const std::string &message);

/// A readable shape for messages ("[2, 3]").
inline std::string str(const Shape &shape) { return formatShape(shape); }

/// Dims non-negative, data present when there are elements.
Status checkTensor(const char *op, const char *role, const TensorView &tensor);
/// dtype equality with a message naming both.
Status checkDType(const char *op, const char *role, const TensorView &tensor,
                  DType expected);
/// Shape equality with a message naming both.
Status checkShape(const char *op, const char *role, const TensorView &tensor,
                  const Shape &expected);
/// Axis in [0, rank).
Status checkAxis(const char *op, int64_t axis, size_t rank);

/// Returns from the calling kernel when a check fails.
#define SHARDC_CPU_TRY(expression)                                             \
  do {                                                                         \
    ::shardc::rt::cpu::Status status_ = (expression);                          \
    if (!status_.ok())                                                         \
      return status_;                                                          \
  } while (false)

//===----------------------------------------------------------------------===//
// Shapes and strided walks
//===----------------------------------------------------------------------===//

/// Row-major element strides.
Shape rowMajorStrides(const Shape &shape);
/// numpy broadcasting of two shapes; false if incompatible.
bool broadcastShapes(const Shape &a, const Shape &b, Shape &result);
/// Whether `from` broadcasts to exactly `to` (right-aligned, each dim equal or 1).
bool broadcastsTo(const Shape &from, const Shape &to);
/// Strides that read a tensor of shape `from` as if it had shape `to`
/// (precondition: broadcastsTo): 0 where `from` lacks the dim or has size 1.
Shape broadcastStrides(const Shape &from, const Shape &to);
/// Product of shape[begin, end).
int64_t product(const Shape &shape, size_t begin, size_t end);

/// An index space with N operands, each with element strides per dim. make()
/// simplifies it without changing the visit order: size-1 dims dropped and
/// neighbours merged wherever every operand steps through them as one dim, so
/// a same-shape elementwise op becomes one flat run and [8,1]+[1,16] two dims.
template <size_t N> struct Walk {
  Shape shape; // at least one dim
  std::array<Shape, N> strides;

  static Walk make(const Shape &shape, const std::array<Shape, N> &strides) {
    Walk walk;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      if (!walk.shape.empty()) {
        // Merge into the previous dim if each operand's stride there equals
        // its stride here times this dim's size.
        bool mergeable = true;
        for (size_t k = 0; k < N; ++k)
          mergeable &= walk.strides[k].back() == strides[k][d] * shape[d];
        if (mergeable) {
          walk.shape.back() *= shape[d];
          for (size_t k = 0; k < N; ++k)
            walk.strides[k].back() = strides[k][d];
          continue;
        }
      }
      walk.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k)
        walk.strides[k].push_back(strides[k][d]);
    }
    if (walk.shape.empty()) {
      walk.shape.push_back(1);
      for (size_t k = 0; k < N; ++k)
        walk.strides[k].push_back(0);
    }
    return walk;
  }

  int64_t inner() const { return shape.back(); }
  int64_t innerStride(size_t k) const { return strides[k].back(); }

  /// Visits elements [begin, end) of the row-major order as runs along the
  /// innermost dim: fn(offsets, count), element e of a run at
  /// offsets[k] + e * innerStride(k). Offsets are relative to bases.
  template <typename Fn>
  void run(int64_t begin, int64_t end, std::array<int64_t, N> bases,
           Fn &&fn) const {
    if (begin >= end)
      return;
    const size_t rank = shape.size();
    // The running index, on the stack for the ranks real walks have (dims
    // are already merged), so that a walk per output element (reductions)
    // does not allocate.
    constexpr size_t kInlineRank = 8;
    int64_t inlineIndex[kInlineRank] = {};
    std::vector<int64_t> heapIndex;
    int64_t *index = inlineIndex;
    if (rank > kInlineRank) {
      heapIndex.assign(rank, 0);
      index = heapIndex.data();
    }
    // Decompose `begin` into an index, last dim fastest.
    int64_t rest = begin;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    std::array<int64_t, N> offsets = bases;
    for (size_t d = 0; d < rank; ++d)
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    int64_t remaining = end - begin;
    const int64_t innerSize = shape.back();
    while (remaining > 0) {
      const int64_t count = std::min(innerSize - index[rank - 1], remaining);
      fn(static_cast<const std::array<int64_t, N> &>(offsets), count);
      remaining -= count;
      if (remaining == 0)
        break;
      // Move to the start of the next run: rewind the inner dim, carry.
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= index[rank - 1] * strides[k].back();
      index[rank - 1] = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        for (size_t k = 0; k < N; ++k)
          offsets[k] += strides[k][d];
        if (++index[d] < shape[d])
          break;
        for (size_t k = 0; k < N; ++k)
          offsets[k] -= strides[k][d] * shape[d];
        index[d] = 0;
      }
    }
  }
};

/// dst[i] = src[base + strided offset of i] over the walk's index space, for
/// any element size; parallel over the destination. The walk's operand 0 is
/// the destination (row-major), operand 1 the source.
void stridedCopy(size_t elementSize, void *dst, const void *src,
                 int64_t srcBase, const Walk<2> &walk, int64_t count);

} // namespace shardc::rt::cpu::detail

#endif // SHARDC_RUNTIME_CPU_KERNELSUPPORT_H
