//===- NormalizationTest.cpp - layer_norm and rms_norm --------------------===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

/// Element i of a parameter broadcast to the normalized shape.
double parameterAt(const HostTensor &param, const Shape &normalized, int64_t i) {
  int64_t offset = 0, stride = 1;
  for (size_t d = normalized.size(); d-- > 0;) {
    const int64_t index = i % normalized[d];
    i /= normalized[d];
    const size_t pd = d + param.shape.size() - normalized.size();
    if (d + param.shape.size() >= normalized.size()) {
      if (param.shape[pd] != 1)
        offset += index * stride;
      stride *= param.shape[pd];
    }
  }
  return getDouble(param, offset);
}

/// The textbook definitions, in double.
std::vector<double> naiveNorm(const HostTensor &x, const HostTensor &scale, const HostTensor *bias,
                              int64_t axis, double epsilon, bool rms) {
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t n = numElements(normalized), rows = x.numel() / std::max<int64_t>(n, 1);
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      mean += getDouble(x, r * n + i) / double(n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = getDouble(x, r * n + i) - (rms ? 0 : mean);
      var += v * v / double(n);
    }
    for (int64_t i = 0; i < n; ++i) {
      const double v = (getDouble(x, r * n + i) - (rms ? 0 : mean)) / std::sqrt(var + epsilon);
      out.push_back(v * parameterAt(scale, normalized, i) +
                    (bias ? parameterAt(*bias, normalized, i) : 0));
    }
  }
  return out;
}

struct NormCase {
  Shape input;
  int64_t axis;
  Shape scale, bias;
};

const NormCase kCases[] = {
    {{2, 5, 64}, 2, {64}, {64}},          // the transformer case
    {{3, 4, 5}, 1, {4, 5}, {4, 5}},       // several normalized dims
    {{3, 4, 5}, 1, {5}, {1, 5}},          // parameters broadcast over them
    {{2, 3, 4, 5}, 0, {1, 1, 1}, {4, 1}}, // the whole tensor is one row
    {{700, 33}, 1, {33}, {33}},           // many rows: parallel
    {{4, 1}, 1, {1}, {1}},                // one element per row: variance 0
};

TEST(CpuNormTest, LayerNormMatchesNaive) {
  ThreadScope threads(2);
  Rng rng(41);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const double rtol = type == DType::F16 ? 4e-3 : type == DType::BF16 ? 3e-2 : 1e-5;
    for (const NormCase &c : kCases) {
      for (bool withBias : {true, false}) {
        HostTensor x = random(type, c.input, rng, -3, 5);
        HostTensor scale = random(type, c.scale, rng, 0.5, 2), bias = random(type, c.bias, rng);
        HostTensor out(type, c.input);
        ASSERT_TRUE(succeeded(layerNorm(x.view(), scale.view(),
                                        withBias ? ptr(bias.view()) : nullptr, c.axis, 1e-5,
                                        out.view())));
        EXPECT_TRUE(closeTo(out, c.input,
                            naiveNorm(x, scale, withBias ? &bias : nullptr, c.axis, 1e-5, false),
                            rtol, rtol))
            << dtypeName(type) << " " << formatShape(c.input) << " axis " << c.axis;
      }
    }
  }
}

TEST(CpuNormTest, RmsNormMatchesNaive) {
  ThreadScope threads(2);
  Rng rng(42);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const double rtol = type == DType::F16 ? 4e-3 : type == DType::BF16 ? 3e-2 : 1e-5;
    for (const NormCase &c : kCases) {
      HostTensor x = random(type, c.input, rng, -3, 5);
      HostTensor scale = random(type, c.scale, rng, 0.5, 2);
      HostTensor out(type, c.input);
      ASSERT_TRUE(succeeded(rmsNorm(x.view(), scale.view(), c.axis, 1e-6, out.view())));
      EXPECT_TRUE(closeTo(out, c.input, naiveNorm(x, scale, nullptr, c.axis, 1e-6, true), rtol,
                          rtol))
          << dtypeName(type) << " " << formatShape(c.input);
    }
  }
}

TEST(CpuNormTest, LargeMeanSmallSpreadKeepsPrecision) {
  // x = 10000 + noise of 1e-2: E[x^2] - E[x]^2 in fp32 would lose every
  // digit of the variance; the two-pass double form keeps them.
  Rng rng(43);
  HostTensor x = random(DType::F32, {4, 512}, rng, -0.01, 0.01);
  for (int64_t i = 0; i < x.numel(); ++i)
    setDouble(x, i, 10000 + getDouble(x, i));
  HostTensor scale = filled(DType::F32, {512}, 1);
  HostTensor out(DType::F32, {4, 512});
  ASSERT_TRUE(succeeded(layerNorm(x.view(), scale.view(), nullptr, 1, 1e-12, out.view())));
  // Inputs are fp32 values near 1e4 (spacing ~1e-3), so the reference uses
  // the same rounded inputs; the result is good to fp32 rounding of x - mean.
  EXPECT_TRUE(closeTo(out, {4, 512}, naiveNorm(x, scale, nullptr, 1, 1e-12, false), 1e-4, 1e-4));
}

TEST(CpuNormTest, InPlace) {
  Rng rng(44);
  HostTensor x = random(DType::F32, {3, 16}, rng), scale = random(DType::F32, {16}, rng);
  const std::vector<double> want = naiveNorm(x, scale, nullptr, 1, 1e-5, true);
  ASSERT_TRUE(succeeded(rmsNorm(x.view(), scale.view(), 1, 1e-5, x.view())));
  EXPECT_TRUE(closeTo(x, {3, 16}, want, 1e-5, 1e-6));
}

TEST(CpuNormTest, RejectsBadParameters) {
  HostTensor x(DType::F32, {2, 3, 4}), out(DType::F32, {2, 3, 4});
  HostTensor wrong(DType::F32, {3}), half(DType::F16, {4}), ok(DType::F32, {4});
  EXPECT_TRUE(failsWith(layerNorm(x.view(), wrong.view(), nullptr, 2, 1e-5, out.view()),
                        "layer_norm: scale shape does not fit the normalized dims; expected to "
                        "broadcast to [4] but got [3]"));
  EXPECT_TRUE(failsWith(layerNorm(x.view(), ok.view(), ptr(half.view()), 2, 1e-5, out.view()),
                        "bias element type differs; expected float32 but got float16"));
  EXPECT_TRUE(failsWith(rmsNorm(x.view(), ok.view(), 3, 1e-5, out.view()),
                        "rms_norm: axis 3 is out of range for rank 3"));
  HostTensor i(DType::I32, {2, 3, 4});
  EXPECT_TRUE(failsWith(rmsNorm(i.view(), ok.view(), 2, 1e-5, i.view()), "needs a float input"));
}

} // namespace
} // namespace shardc::rt::cpu::test
