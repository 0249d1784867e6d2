//===- VectorMathTest.cpp - the vectorizable exp, sigmoid and erfc ---------===//
//
// Each function is swept densely over its whole float domain and compared
// with libm in double, with the accuracy VectorMath.h promises.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/VectorMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace shardc::rt::cpu::test {
namespace {

constexpr float kUlp = std::numeric_limits<float>::epsilon(); // 2^-23
constexpr double kSmallestSubnormal = 1.401298464324817e-45;  // 2^-149

/// The largest |got - want| / |want| over x = from, from + step, ..., to,
/// for results at or above `floor` in magnitude.
template <typename Got, typename Want>
double worstRelativeError(float from, float to, float step, double floor, Got got, Want want) {
  double worst = 0;
  for (float x = from; x <= to; x += step) {
    const double expected = want(double(x));
    if (std::fabs(expected) < floor)
      continue;
    worst = std::max(worst, std::fabs(double(got(x)) - expected) / std::fabs(expected));
  }
  return worst;
}

TEST(VectorMathTest, ExpIsWithinTwoUlpOverTheNormalRange) {
  const double worst = worstRelativeError(
      -87.3f, 88.7f, 0.00731f, 0.0, [](float x) { return vmath::exp(x); },
      [](double x) { return std::exp(x); });
  EXPECT_LE(worst, 2 * kUlp);
}

TEST(VectorMathTest, ExpKeepsSubnormalsAndTheEdges) {
  for (float x = -103.9f; x < -87.4f; x += 0.0137f)
    EXPECT_NEAR(vmath::exp(x), std::exp(double(x)), 2 * kSmallestSubnormal) << x;
  EXPECT_EQ(vmath::exp(-105.0f), 0.0f);
  EXPECT_EQ(vmath::exp(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(vmath::exp(89.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vmath::exp(0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(vmath::exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VectorMathTest, SigmoidIsAccurateAndNeverOverflows) {
  const double worst = worstRelativeError(
      -100.0f, 100.0f, 0.0173f, 1e-37, [](float x) { return vmath::sigmoid(x); },
      [](double x) { return 1 / (1 + std::exp(-x)); });
  EXPECT_LE(worst, 3 * kUlp);
  EXPECT_EQ(vmath::sigmoid(-1000.0f), 0.0f);
  EXPECT_EQ(vmath::sigmoid(1000.0f), 1.0f);
}

TEST(VectorMathTest, ErfcMeetsItsStatedAccuracy) {
  auto got = [](float z) { return vmath::erfc(z); };
  auto want = [](double z) { return std::erfc(z); };
  // Near 0: the fit's 1.2e-7 plus the roundings of the exponent z * z - P(t).
  EXPECT_LE(worstRelativeError(-2.8f, 2.8f, 0.00113f, 0, got, want), 1e-6);
  // Further out the rounding of z * z grows with z^2 * 2^-24.
  EXPECT_LE(worstRelativeError(2.8f, 4.0f, 0.00113f, 0, got, want), 2e-6);
  EXPECT_LE(worstRelativeError(4.0f, 8.5f, 0.00113f, 1e-37, got, want), 1e-5);
  // erfc(-z) = 2 - erfc(z) is near 2 for large negative z.
  EXPECT_LE(worstRelativeError(-9.0f, -2.8f, 0.00113f, 0, got, want), 1e-6);
  EXPECT_EQ(vmath::erfc(0.0f), 1.0f);
  EXPECT_EQ(vmath::erfc(20.0f), 0.0f);
  EXPECT_EQ(vmath::erfc(-20.0f), 2.0f);
}

} // namespace
} // namespace shardc::rt::cpu::test
