//===- KernelSupport.h - dtype dispatch, strided copies (internal) -*- C++ -*-===//
//
// Internal to the CPU kernels: what every family needs and none owns.
//  - dtype dispatch: one template per kernel, instantiated per storage type
//    (float, double, Half, BFloat16, the integers, Bool8), chosen once per
//    call, never per element;
//  - the strided copy that runs a walk (runtime/kernels/Shapes.h) in threads.
// The operand checks and the shape arithmetic are the kernel contract's
// (runtime/kernels/), which the CUDA backend shares; cpu::detail sees them
// unqualified, as its own.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CPU_KERNELSUPPORT_H
#define SHARDC_RUNTIME_CPU_KERNELSUPPORT_H

#include "runtime/core/HalfFloat.h"
#include "runtime/core/Tensor.h"
#include "runtime/cpu/Status.h"
#include "runtime/kernels/Operands.h"
#include "runtime/kernels/Shapes.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace shardc::rt::cpu::detail {

using namespace ::shardc::rt::kernels;

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

/// Integer arithmetic wraps to the element's width (two's complement), like
/// onnxruntime and numpy: computing in uint64_t is defined on overflow and
/// the conversion back keeps the low bits.
template <typename T> inline T wrapTo(uint64_t bits) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(bits));
}

/// dst[i] = src[base + strided offset of i] over the walk's index space, for
/// any element size; parallel over the destination. The walk's operand 0 is
/// the destination (row-major), operand 1 the source.
void stridedCopy(size_t elementSize, void *dst, const void *src,
                 int64_t srcBase, const Walk<2> &walk, int64_t count);

} // namespace shardc::rt::cpu::detail

#endif // SHARDC_RUNTIME_CPU_KERNELSUPPORT_H
