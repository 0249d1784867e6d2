//===- FusedTest.cpp - the fused-expression interpreter -------------------===//
#include "CudaTestUtil.h"

namespace shardc::rt::cuda::test {
namespace {

Params program(std::vector<std::string> ops, std::vector<int64_t> args) {
  Params params;
  params.set("ops", strings(std::move(ops)));
  params.set("args", ints(std::move(args)));
  return params;
}

TEST(CudaFused, GeluOfAnAffineMap) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  // gelu(x * w + b): inputs 0..2, op results 3..5.
  const Params params = program({"mul", "add", "gelu"}, {0, 1, 3, 2, 4});
  for (const Shape &shape : {Shape{4, 256}, Shape{3, 37}})
    expectSameAsCpu("fused",
                    {random(DType::F32, shape, rng, -3, 3), random(DType::F32, {shape[1]}, rng),
                     random(DType::F32, {1}, rng)},
                    {{DType::F32, shape}}, params, "gelu(x * w + b) " + formatShape(shape));
}

TEST(CudaFused, EveryOp) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  const char *unary[] = {"neg",  "abs",  "sqrt", "rsqrt",    "reciprocal", "exp",
                         "log",  "cos",  "sin",  "erf",      "tanh",       "sigmoid",
                         "relu", "silu", "gelu", "gelu_tanh"};
  const char *binary[] = {"add", "sub", "mul", "div", "pow", "max", "min"};
  const HostTensor positive = random(DType::F32, {2, 3, 40}, rng, 0.05, 4);
  const HostTensor other = random(DType::F32, {3, 1}, rng, -2, 2);
  for (const char *op : unary)
    expectSameAsCpu("fused", {positive}, {{DType::F32, positive.shape}}, program({op}, {0}), op);
  for (const char *op : binary)
    expectSameAsCpu("fused", {positive, other}, {{DType::F32, positive.shape}},
                    program({op}, {0, 1}), op);
  // A chain that reuses values: (a - b) * (a - b) + exp(b).
  expectSameAsCpu("fused", {positive, other}, {{DType::F32, positive.shape}},
                  program({"sub", "mul", "exp", "add"}, {0, 1, 2, 2, 1, 3, 4}), "chain");
}

} // namespace
} // namespace shardc::rt::cuda::test
