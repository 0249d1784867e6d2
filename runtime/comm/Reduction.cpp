//===- Reduction.cpp - the sums every communicator computes ---------------===//
#include "runtime/comm/Reduction.h"

#include "runtime/core/HalfFloat.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace shardc::rt::comm {
namespace {

/// out[i] = a[i] + b[i]; out may be a or b (each element is read first).
/// Integers add as unsigned U, which wraps (signed overflow is undefined).
template <typename T, typename U = T>
void addPairTyped(void *out, const void *a, const void *b, size_t count) {
  auto *o = static_cast<T *>(out);
  const auto *x = static_cast<const T *>(a), *y = static_cast<const T *>(b);
  for (size_t i = 0; i < count; ++i)
    o[i] = static_cast<T>(static_cast<U>(x[i]) + static_cast<U>(y[i]));
}

void addPair(void *out, const void *a, const void *b, size_t count, DType dtype) {
  switch (dtype) {
  case DType::F32:
    return addPairTyped<float>(out, a, b, count);
  case DType::F64:
    return addPairTyped<double>(out, a, b, count);
  case DType::I32:
    return addPairTyped<int32_t, uint32_t>(out, a, b, count);
  case DType::I64:
    return addPairTyped<int64_t, uint64_t>(out, a, b, count);
  default:
    return;
  }
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
  addPair(accumulator, accumulator, in, count, dtype); // checkSummable comes first
}

namespace {

void widenInto(const void *in, float *out, size_t count, DType dtype) {
  if (dtype == DType::F16)
    for (size_t i = 0; i < count; ++i)
      out[i] = rt::toFloat(static_cast<const rt::Half *>(in)[i]);
  else
    for (size_t i = 0; i < count; ++i)
      out[i] = rt::toFloat(static_cast<const rt::BFloat16 *>(in)[i]);
}

} // namespace

std::vector<float> widen(const void *in, size_t count, DType dtype) {
  std::vector<float> out(count);
  widenInto(in, out.data(), count, dtype);
  return out;
}

void sumInOrder(const std::vector<const void *> &sources, void *out, size_t count, DType dtype) {
  // 32 KiB of accumulator: it stays in L1/L2 while every source streams by.
  constexpr size_t kChunkBytes = 32 * 1024;
  alignas(64) std::byte accumulator[kChunkBytes];
  alignas(64) float wide[kChunkBytes / sizeof(float)];
  const bool half = isHalfType(dtype);
  const DType sumType = half ? DType::F32 : dtype;
  const size_t element = dtypeSize(dtype), sumElement = dtypeSize(sumType);
  if (sources.size() == 1) { // a group of one: its values, as they are
    if (out != sources[0])
      std::memmove(out, sources[0], count * element);
    return;
  }
  if (!half && sources.size() == 2) // two ranks: one pass, no accumulator
    return addPair(out, sources[0], sources[1], count, dtype);
  const size_t chunk = kChunkBytes / sumElement;
  for (size_t begin = 0; begin < count; begin += chunk) {
    const size_t n = std::min(chunk, count - begin);
    auto at = [&](const void *base) { return static_cast<const std::byte *>(base) + begin * element; };
    for (size_t source = 0; source < sources.size(); ++source) {
      const void *part = at(sources[source]);
      if (half) {
        widenInto(part, source ? wide : reinterpret_cast<float *>(accumulator), n, dtype);
        if (source)
          addInto(accumulator, wide, n, DType::F32);
      } else if (source == 1) {
        addPair(accumulator, at(sources[0]), part, n, dtype);
      } else if (source > 1) {
        addInto(accumulator, part, n, dtype);
      }
    }
    auto *target = static_cast<std::byte *>(out) + begin * element;
    if (half)
      narrow(reinterpret_cast<const float *>(accumulator), target, n, dtype);
    else
      std::memcpy(target, accumulator, n * element);
  }
}

void narrow(const float *in, void *out, size_t count, DType dtype) {
  if (dtype == DType::F16)
    for (size_t i = 0; i < count; ++i)
      static_cast<rt::Half *>(out)[i] = rt::toHalf(in[i]);
  else
    for (size_t i = 0; i < count; ++i)
      static_cast<rt::BFloat16 *>(out)[i] = rt::toBFloat16(in[i]);
}

} // namespace shardc::rt::comm
