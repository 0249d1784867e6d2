//===- MatMulTest.cpp - matmul and linear through cuBLASLt ----------------===//
#include "CudaTestUtil.h"

namespace shardc::rt::cuda::test {
namespace {

struct Case {
  const char *name;
  Shape lhs, rhs, out;
};

const Case kCases[] = {{"matrix", {17, 33}, {33, 9}, {17, 9}},
                       {"dense batches", {3, 4, 5}, {3, 5, 6}, {3, 4, 6}},
                       {"shared rhs: one tall GEMM", {2, 3, 4, 5}, {5, 7}, {2, 3, 4, 7}},
                       {"shared lhs", {4, 5}, {3, 5, 6}, {3, 4, 6}},
                       {"broadcast both ways", {2, 1, 4, 5}, {1, 3, 5, 6}, {2, 3, 4, 6}},
                       {"vector x matrix", {5}, {5, 3}, {3}},
                       {"matrix x vector", {2, 4, 5}, {5}, {2, 4}},
                       {"vector x vector", {7}, {7}, {}},
                       {"nothing to sum", {3, 0}, {0, 4}, {3, 4}}};

TEST(CudaMatMul, FloatsMatchTheCpu) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  for (const Case &c : kCases)
    for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::F64})
      expectSameAsCpu("matmul", {random(dtype, c.lhs, rng), random(dtype, c.rhs, rng)},
                      {{dtype, c.out}}, Params(), std::string(c.name) + " " + dtypeName(dtype));
}

TEST(CudaMatMul, IntegersExactly) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  for (const Case &c : kCases)
    for (DType dtype : {DType::I64, DType::I32, DType::I8})
      expectSameAsCpu("matmul",
                      {random(dtype, c.lhs, rng, -100, 100), random(dtype, c.rhs, rng, -100, 100)},
                      {{dtype, c.out}}, Params(), std::string(c.name) + " " + dtypeName(dtype));
}

TEST(CudaMatMul, LargerShapesAccumulateInFp32) {
  SHARDC_REQUIRE_GPU();
  Rng rng(3);
  // K = 768: fp16/bf16 inputs, fp32 accumulation on both backends.
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    expectSameAsCpu("matmul", {random(dtype, {2, 64, 768}, rng), random(dtype, {768, 192}, rng)},
                    {{dtype, {2, 64, 192}}}, Params(), std::string("K=768 ") + dtypeName(dtype));
}

TEST(CudaLinear, BiasAndTransposedWeights) {
  SHARDC_REQUIRE_GPU();
  Rng rng(4);
  const int64_t K = 33, N = 19;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool transposed : {false, true})
      for (bool withBias : {true, false}) {
        Params params;
        params.set("transpose_weight", ints({transposed}));
        std::vector<HostTensor> inputs = {
            random(dtype, {2, 7, K}, rng),
            random(dtype, transposed ? Shape{N, K} : Shape{K, N}, rng)};
        if (withBias)
          inputs.push_back(random(dtype, {N}, rng));
        expectSameAsCpu("linear", inputs, {{dtype, {2, 7, N}}}, params,
                        std::string("linear ") + dtypeName(dtype) +
                            (transposed ? " transposed" : "") + (withBias ? " bias" : ""));
      }
  // No input features: the bias alone.
  Params params;
  expectSameAsCpu("linear",
                  {HostTensor(DType::F32, {3, 0}), HostTensor(DType::F32, {0, 4}),
                   random(DType::F32, {4}, rng)},
                  {{DType::F32, {3, 4}}}, params, "linear K=0");
}

} // namespace
} // namespace shardc::rt::cuda::test
