//===- ElementValues.h - tensor elements as doubles, for the runtime tests -*- C++ -*-===//
//
// The runtime's tests (the CPU and CUDA kernels', the collectives') fill
// inputs and read results element by element whatever the element type, so
// one reference formula in double serves every type.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TEST_UNIT_RUNTIME_ELEMENTVALUES_H
#define SHARDC_TEST_UNIT_RUNTIME_ELEMENTVALUES_H

#include "runtime/core/HalfFloat.h"
#include "runtime/core/Tensor.h"

#include <cstdint>
#include <type_traits>

namespace shardc::rt::test {

namespace detail {

/// Calls fn(T{}) with the storage type of `dtype`'s elements (Bool: uint8_t).
template <typename Fn> void withStorageType(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F32:
    return fn(float{});
  case DType::F64:
    return fn(double{});
  case DType::F16:
    return fn(Half{});
  case DType::BF16:
    return fn(BFloat16{});
  case DType::I64:
    return fn(int64_t{});
  case DType::I32:
    return fn(int32_t{});
  case DType::I16:
    return fn(int16_t{});
  case DType::I8:
    return fn(int8_t{});
  case DType::U8:
  case DType::Bool:
    return fn(uint8_t{});
  }
}

} // namespace detail

/// Element i of `data` (of `dtype`) as a double: exact for every type but
/// I64 beyond 2^53; Bool as 0 or 1.
inline double elementValue(DType dtype, const void *data, int64_t i) {
  double value = 0;
  detail::withStorageType(dtype, [&](auto type) {
    using T = decltype(type);
    const T element = static_cast<const T *>(data)[i];
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      value = toFloat(element);
    else
      value = double(element);
  });
  return value;
}

/// Stores `value` as element i: rounded to nearest for the float types,
/// truncated for the integers, value != 0 for Bool.
inline void setElementValue(DType dtype, void *data, int64_t i, double value) {
  if (dtype == DType::Bool)
    value = value != 0;
  detail::withStorageType(dtype, [&](auto type) {
    using T = decltype(type);
    T &element = static_cast<T *>(data)[i];
    if constexpr (std::is_same_v<T, Half>)
      element = toHalf(float(value));
    else if constexpr (std::is_same_v<T, BFloat16>)
      element = toBFloat16(float(value));
    else
      element = T(value);
  });
}

inline double elementValue(const HostTensor &tensor, int64_t i) {
  return elementValue(tensor.dtype, tensor.bytes.data(), i);
}

inline void setElementValue(HostTensor &tensor, int64_t i, double value) {
  setElementValue(tensor.dtype, tensor.bytes.data(), i, value);
}

} // namespace shardc::rt::test

#endif
