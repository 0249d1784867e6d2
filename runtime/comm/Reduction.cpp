//===- Reduction.cpp - the sums every communicator computes ---------------===//
#include "runtime/comm/Reduction.h"

#include "runtime/cpu/HalfFloat.h"

#include <cstdint>

namespace shardc::rt::comm {
namespace {

template <typename T> void addTyped(void *accumulator, const void *in, size_t count) {
  auto *acc = static_cast<T *>(accumulator);
  const auto *x = static_cast<const T *>(in);
  for (size_t i = 0; i < count; ++i)
    acc[i] += x[i];
}

/// Signed overflow is undefined in C++: add as unsigned, which wraps.
template <typename T, typename U>
void addWrapping(void *accumulator, const void *in, size_t count) {
  auto *acc = static_cast<T *>(accumulator);
  const auto *x = static_cast<const T *>(in);
  for (size_t i = 0; i < count; ++i)
    acc[i] = static_cast<T>(static_cast<U>(acc[i]) + static_cast<U>(x[i]));
}

} // namespace

Status checkSummable(DType dtype, const char *collective) {
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::F16:
  case DType::BF16:
  case DType::I32:
  case DType::I64:
    return {};
  default:
    return Status::error(std::string(collective) + ": sums of " + dtypeName(dtype) +
                         " are not supported (float32, float64, float16, bfloat16, int32, "
                         "int64 are)");
  }
}

void addInto(void *accumulator, const void *in, size_t count, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return addTyped<float>(accumulator, in, count);
  case DType::F64:
    return addTyped<double>(accumulator, in, count);
  case DType::I32:
    return addWrapping<int32_t, uint32_t>(accumulator, in, count);
  case DType::I64:
    return addWrapping<int64_t, uint64_t>(accumulator, in, count);
  default:
    return; // checkSummable (and widen for the halves) come first
  }
}

std::vector<float> widen(const void *in, size_t count, DType dtype) {
  std::vector<float> out(count);
  if (dtype == DType::F16)
    for (size_t i = 0; i < count; ++i)
      out[i] = cpu::toFloat(static_cast<const cpu::Half *>(in)[i]);
  else
    for (size_t i = 0; i < count; ++i)
      out[i] = cpu::toFloat(static_cast<const cpu::BFloat16 *>(in)[i]);
  return out;
}

void narrow(const float *in, void *out, size_t count, DType dtype) {
  if (dtype == DType::F16)
    for (size_t i = 0; i < count; ++i)
      static_cast<cpu::Half *>(out)[i] = cpu::toHalf(in[i]);
  else
    for (size_t i = 0; i < count; ++i)
      static_cast<cpu::BFloat16 *>(out)[i] = cpu::toBFloat16(in[i]);
}

} // namespace shardc::rt::comm
