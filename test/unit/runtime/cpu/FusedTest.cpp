//===- FusedTest.cpp - the fused elementwise kernel -----------------------===//
//
// Each op of the fused kernel against the unary and binary kernels of the
// same name (themselves checked against the constant evaluator in
// ElementwiseTest), over inputs that take each way of reading an input: the
// output's own shape, one element, and a broadcast through the index walk.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "runtime/cpu/Fused.h"

namespace shardc::rt::cpu::test {
namespace {

HostTensor runFused(std::vector<HostTensor> &inputs, const std::vector<std::string> &ops,
                    const std::vector<int64_t> &args, const Shape &shape) {
  std::vector<TensorView> views;
  for (HostTensor &input : inputs)
    views.push_back(input.view());
  HostTensor out(DType::F32, shape);
  EXPECT_TRUE(succeeded(fused(views, ops, args, out.view())));
  return out;
}

TEST(CpuFusedTest, EveryUnaryOpMatchesItsKernel) {
  Rng rng(3);
  // 2 x 300 elements: more than one block of the interpreter, not a multiple.
  const Shape shape{2, 300};
  for (const char *name : {"neg",  "abs",       "sqrt",  "rsqrt", "reciprocal", "exp",  "log",
                           "cos",  "sin",       "erf",   "tanh",  "sigmoid",    "relu", "silu",
                           "gelu", "gelu_tanh", "floor", "ceil",  "round",      "sign"}) {
    const bool positive =
        std::string(name) == "sqrt" || std::string(name) == "rsqrt" || std::string(name) == "log";
    std::vector<HostTensor> inputs = {random(DType::F32, shape, rng, positive ? 0.01 : -9, 9)};
    HostTensor want(DType::F32, shape);
    ASSERT_TRUE(succeeded(unary(*unaryOpFromName(name), inputs[0].view(), want.view()))) << name;
    EXPECT_TRUE(closeTo(runFused(inputs, {name}, {0}, shape), shape, valuesOf(want), 2e-6, 1e-7))
        << name;
  }
}

TEST(CpuFusedTest, BinaryOpsReadEveryInputShape) {
  Rng rng(4);
  const Shape shape{3, 5, 40};
  // The output's shape (read in place), one element (filled), and broadcasts along
  // the last and a middle dim (the index walk).
  for (const Shape &other : {Shape{3, 5, 40}, Shape{1}, Shape{40}, Shape{5, 1}, Shape{3, 1, 40}}) {
    for (const char *name : {"add", "sub", "mul", "div", "max", "min"}) {
      std::vector<HostTensor> inputs = {random(DType::F32, shape, rng, -3, 3),
                                        random(DType::F32, other, rng, 0.5, 2)};
      HostTensor want(DType::F32, shape);
      ASSERT_TRUE(succeeded(
          binary(*binaryOpFromName(name), inputs[0].view(), inputs[1].view(), want.view())));
      EXPECT_TRUE(closeTo(runFused(inputs, {name}, {0, 1}, shape), shape, valuesOf(want), 1e-7))
          << name << " with " << formatShape(other);
    }
  }
}

TEST(CpuFusedTest, AChainReusesEarlierResults) {
  // silu(x) * y, the SwiGLU gate, as sigmoid and two multiplies: inputs 0..1,
  // results 2..4.
  Rng rng(5);
  const Shape shape{4, 70};
  std::vector<HostTensor> inputs = {random(DType::F32, shape, rng, -8, 8),
                                    random(DType::F32, shape, rng)};
  const HostTensor got = runFused(inputs, {"sigmoid", "mul", "mul"}, {0, 0, 2, 3, 1}, shape);
  std::vector<double> want;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double x = getDouble(inputs[0], i), y = getDouble(inputs[1], i);
    want.push_back(x / (1 + std::exp(-x)) * y);
  }
  EXPECT_TRUE(closeTo(got, shape, want, 1e-6, 1e-7));
}

// A state updated in place, as shardc-write-states-in-place makes Adam's
// moment: m = m * 0.9 + g * 0.1 written into m, over several blocks on one
// and on two threads, equals the same expression written elsewhere.
TEST(CpuFusedTest, WritesAnInputsOwnStorage) {
  Rng rng(6);
  const Shape shape{7, 300};
  for (int threads : {1, 2}) {
    ThreadScope scope(threads);
    std::vector<HostTensor> inputs = {random(DType::F32, shape, rng),
                                      filled(DType::F32, {}, 0.9f),
                                      random(DType::F32, shape, rng),
                                      filled(DType::F32, {}, 0.1f)};
    const std::vector<std::string> ops = {"mul", "mul", "add"};
    const std::vector<int64_t> args = {0, 1, 2, 3, 4, 5};
    const HostTensor apart = runFused(inputs, ops, args, shape);
    std::vector<TensorView> views;
    for (HostTensor &input : inputs)
      views.push_back(input.view());
    ASSERT_TRUE(succeeded(fused(views, ops, args, inputs[0].view())));
    EXPECT_TRUE(closeTo(inputs[0], shape, valuesOf(apart), 0, 0)) << threads << " thread(s)";
  }
}

TEST(CpuFusedTest, RefusesAnInputThatDoesNotBroadcast) {
  std::vector<HostTensor> inputs = {filled(DType::F32, {2, 3}, 1), filled(DType::F32, {6}, 1)};
  std::vector<TensorView> views = {inputs[0].view(), inputs[1].view()};
  HostTensor out(DType::F32, {2, 3});
  const Status status = fused(views, {"add"}, {0, 1}, out.view());
  ASSERT_FALSE(succeeded(status));
  EXPECT_EQ(status.message(),
            "fused: input 1 of shape [6] does not broadcast to the result's [2, 3]");
}

} // namespace
} // namespace shardc::rt::cpu::test
