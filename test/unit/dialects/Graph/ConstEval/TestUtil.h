//===- TestUtil.h - Builders and matchers for the ConstEval unit tests ----===//

#ifndef SHARDC_TEST_UNIT_CONSTEVAL_TESTUTIL_H
#define SHARDC_TEST_UNIT_CONSTEVAL_TESTUTIL_H

#include "dialects/Graph/ConstEval/ConstEval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace shardc::constfold::test {

using T = ScalarType;

inline HostTensor ints(ScalarType type, Shape shape, std::vector<int64_t> values) {
  return HostTensor::fromInts(type, std::move(shape), std::move(values));
}
inline HostTensor i32(Shape shape, std::vector<int64_t> values) {
  return ints(T::I32, std::move(shape), std::move(values));
}
inline HostTensor i64(Shape shape, std::vector<int64_t> values) {
  return ints(T::I64, std::move(shape), std::move(values));
}
inline HostTensor bools(Shape shape, std::vector<int64_t> values) {
  return ints(T::Bool, std::move(shape), std::move(values));
}
inline HostTensor floats(ScalarType type, Shape shape, std::vector<double> values) {
  return HostTensor::fromFloats(type, std::move(shape), std::move(values));
}
inline HostTensor f32(Shape shape, std::vector<double> values) {
  return floats(T::F32, std::move(shape), std::move(values));
}
inline HostTensor f64(Shape shape, std::vector<double> values) {
  return floats(T::F64, std::move(shape), std::move(values));
}

/// The result succeeded with exactly this integer/Bool tensor.
inline ::testing::AssertionResult isInts(const StatusOr<HostTensor> &result, ScalarType type,
                                         const Shape &shape, const std::vector<int64_t> &values) {
  if (!result)
    return ::testing::AssertionFailure() << "failed: " << result.message();
  if (result->type != type || result->shape != shape || result->ints != values ||
      !result->floats.empty())
    return ::testing::AssertionFailure()
           << "got " << result->toString(100) << ", expected "
           << HostTensor{type, shape, {}, values}.toString(100);
  return ::testing::AssertionSuccess();
}

/// The result succeeded with this float tensor, each element within
/// `tolerance` (relative to max(1, |expected|)); NaN matches NaN, inf matches
/// inf of the same sign.
inline ::testing::AssertionResult isFloats(const StatusOr<HostTensor> &result, ScalarType type,
                                           const Shape &shape, const std::vector<double> &values,
                                           double tolerance = 0) {
  if (!result)
    return ::testing::AssertionFailure() << "failed: " << result.message();
  HostTensor expected{type, shape, values, {}};
  bool same = result->type == type && result->shape == shape &&
              result->floats.size() == values.size() && result->ints.empty();
  for (size_t i = 0; same && i < values.size(); ++i) {
    double got = result->floats[i], want = values[i];
    if (std::isnan(want) || std::isinf(want))
      same = std::isnan(want) ? std::isnan(got) : got == want;
    else
      same = std::fabs(got - want) <= tolerance * std::max(1.0, std::fabs(want));
  }
  if (!same)
    return ::testing::AssertionFailure()
           << "got " << result->toString(100) << ", expected "
           << expected.toString(100);
  return ::testing::AssertionSuccess();
}

/// The op failed, and its message contains `needle`.
template <typename V>
::testing::AssertionResult failsWith(const StatusOr<V> &result, const std::string &needle) {
  if (result)
    return ::testing::AssertionFailure() << "succeeded, expected an error";
  if (result.message().find(needle) == std::string::npos)
    return ::testing::AssertionFailure()
           << "error '" << result.message() << "' does not mention '" << needle << "'";
  return ::testing::AssertionSuccess();
}

/// f32 has 24 significand bits; this allows a couple of ulps.
inline constexpr double kF32Tolerance = 3e-7;

} // namespace shardc::constfold::test

#endif // SHARDC_TEST_UNIT_CONSTEVAL_TESTUTIL_H
