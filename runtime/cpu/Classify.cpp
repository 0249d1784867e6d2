//===- Classify.cpp - is_nan and is_inf -----------------------------------===//
#include "runtime/cpu/Elementwise.h"

#include "runtime/cpu/Checks.h"
#include "runtime/cpu/KernelSupport.h"
#include "runtime/cpu/Parallel.h"

#include <cmath>

namespace shardc::rt::cpu {
namespace {

using namespace detail;

/// out[i] = test(in[i]) for a float input and a bool out of its shape.
template <typename Test>
Status classify(const char *name, const TensorView &input, const TensorView &out, Test test) {
  SHARDC_KERNEL_TRY(checkClassify(name, input, out));
  auto *result = out.as<uint8_t>();
  dispatchFloat(input.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *in = input.as<const T>();
    parallelFor(input.numel(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        result[i] = test(load(in[i])) ? 1 : 0;
    });
  });
  return Status::success();
}

} // namespace

Status isNaN(const TensorView &input, const TensorView &out) {
  return classify("is_nan", input, out, [](auto x) { return std::isnan(x); });
}

Status isInf(const TensorView &input, bool detectPositive, bool detectNegative,
             const TensorView &out) {
  return classify("is_inf", input, out, [&](auto x) {
    return std::isinf(x) && (x > 0 ? detectPositive : detectNegative);
  });
}

} // namespace shardc::rt::cpu
