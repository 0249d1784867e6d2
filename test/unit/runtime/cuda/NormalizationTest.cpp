//===- NormalizationTest.cpp - layer_norm and rms_norm --------------------===//
#include "CudaTestUtil.h"

namespace shardc::rt::cuda::test {
namespace {

struct Case {
  Shape shape;
  int64_t axis;
  Shape parameter; // scale and bias
};

const Case kCases[] = {{{6, 64}, 1, {64}},          // a warp per row, 16-byte loads
                       {{5, 37}, 1, {37}},          // a warp per row, element loads
                       {{3, 4096}, 1, {4096}},      // a block per row
                       {{2, 3, 8, 16}, 2, {8, 16}}, // several normalized dims
                       {{4, 6, 10}, 1, {1, 10}},    // a broadcast parameter
                       {{4, 2, 3}, 1, {2, 1}}};

TEST(CudaNormalization, LayerNorm) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  for (const Case &c : kCases)
    for (DType dtype : {DType::F32, DType::F16, DType::BF16})
      for (bool withBias : {true, false}) {
        Params params;
        params.set("axis", ints({c.axis}));
        params.set("epsilon", number(1e-5));
        std::vector<HostTensor> inputs = {random(dtype, c.shape, rng, -3, 3),
                                          random(dtype, c.parameter, rng, 0.5, 1.5)};
        if (withBias)
          inputs.push_back(random(dtype, c.parameter, rng, -1, 1));
        expectSameAsCpu("layer_norm", inputs, {{dtype, c.shape}}, params,
                        std::string("layer_norm ") + dtypeName(dtype) + " " + formatShape(c.shape) +
                            (withBias ? " bias" : ""));
      }
}

TEST(CudaNormalization, LayerNormLargeMeanSmallSpread) {
  SHARDC_REQUIRE_GPU();
  // Activations near 1e4 with noise 1e-2: sums of x and x^2 would cancel in
  // fp32; the shifted sums do not.
  Rng rng(2);
  HostTensor input = random(DType::F32, {8, 1024}, rng, -0.01, 0.01);
  for (int64_t i = 0; i < input.numel(); ++i)
    set(input, i, get(input, i) + 1e4);
  Params params;
  params.set("axis", ints({1}));
  params.set("epsilon", number(1e-12));
  // The centred values carry fp32's rounding of x (ulp(1e4) ~ 1e-3 of a
  // 1e-2 spread) on both backends alike; allow a little more than 1e-5.
  expectSameAsCpu("layer_norm",
                  {input, values(DType::F32, {1024}, {1.0}), values(DType::F32, {1024}, {0.0})},
                  {{DType::F32, {8, 1024}}}, params, "layer_norm around 1e4", false, 10);
}

TEST(CudaNormalization, RmsNorm) {
  SHARDC_REQUIRE_GPU();
  Rng rng(3);
  for (const Case &c : kCases)
    for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
      Params params;
      params.set("axis", ints({c.axis}));
      params.set("epsilon", number(1e-6));
      expectSameAsCpu(
          "rms_norm",
          {random(dtype, c.shape, rng, -3, 3), random(dtype, c.parameter, rng, 0.5, 1.5)},
          {{dtype, c.shape}}, params,
          std::string("rms_norm ") + dtypeName(dtype) + " " + formatShape(c.shape));
    }
}

} // namespace
} // namespace shardc::rt::cuda::test
