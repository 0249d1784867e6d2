//===- CheckTest.cpp - the CUDA table and its prepare-time checks ---------===//
//
// The checks call no CUDA API, so these tests run on any machine: they are
// what tells, before a GPU is at hand, that every step the CPU runs has a
// CUDA kernel and which steps the GPU refuses when a program is prepared.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "runtime/cpu/CpuBackend.h"
#include "runtime/cuda/CudaBackend.h"

namespace shardc::rt::cuda::test {
namespace {

const char *const kKernels[] = {"neg",
                                "abs",
                                "sqrt",
                                "rsqrt",
                                "reciprocal",
                                "exp",
                                "log",
                                "cos",
                                "sin",
                                "erf",
                                "tanh",
                                "sigmoid",
                                "relu",
                                "silu",
                                "not",
                                "gelu",
                                "add",
                                "sub",
                                "mul",
                                "div",
                                "pow",
                                "max",
                                "min",
                                "and",
                                "or",
                                "compare",
                                "where",
                                "cast",
                                "matmul",
                                "linear",
                                "reduce_sum",
                                "reduce_mean",
                                "reduce_max",
                                "reduce_min",
                                "softmax",
                                "topk",
                                "transpose",
                                "slice",
                                "concat",
                                "split",
                                "gather",
                                "expand",
                                "scatter_elements",
                                "trilu",
                                "layer_norm",
                                "rms_norm",
                                "attention",
                                "rotary",
                                "fused",
                                "moe_dispatch",
                                "moe_experts",
                                "moe_combine"};

TEST(CudaTable, HasEveryCpuKernelWithACheck) {
  for (const char *name : kKernels) {
    EXPECT_NE(cpu::kernelTable().find(name), nullptr) << name;
    EXPECT_NE(kernelTable().find(name), nullptr) << name;
    EXPECT_NE(kernelTable().findCheck(name), nullptr) << name;
  }
}

/// Views that are never read: checks look at shapes and types only.
TensorView fake(DType dtype, Shape shape) {
  static uint64_t storage[4];
  return {storage, dtype, std::move(shape)};
}

Status check(const char *kernel, std::vector<TensorView> inputs, std::vector<TensorView> outputs,
             const Params &params = Params()) {
  return kernelTable().findCheck(kernel)(KernelCall{inputs, outputs, params});
}

TEST(CudaTable, ChecksAcceptWhatTheGpuRuns) {
  EXPECT_TRUE(
      check("add", {fake(DType::BF16, {2, 3}), fake(DType::BF16, {3})}, {fake(DType::BF16, {2, 3})})
          .ok());
  Params params;
  params.set("scale", number(0.125));
  params.set("causal", ints({1}));
  EXPECT_TRUE(check("attention",
                    {fake(DType::F16, {2, 8, 16, 64}), fake(DType::F16, {2, 2, 16, 64}),
                     fake(DType::F16, {2, 2, 16, 64})},
                    {fake(DType::F16, {2, 8, 16, 64})}, params)
                  .ok());
}

TEST(CudaTable, ChecksGiveTheCpuMessages) {
  Status status =
      check("add", {fake(DType::F32, {2, 3}), fake(DType::F32, {4})}, {fake(DType::F32, {2, 3})});
  EXPECT_EQ(status.message(), "add: shapes [2, 3] and [4] do not broadcast");
  status = check("add", {fake(DType::F32, {2}), fake(DType::F32, {2})}, {});
  EXPECT_EQ(status.message(), "expected 2 inputs and 1 outputs; got 2 and 0");
}

TEST(CudaTable, MoeChecksGiveTheCpuMessages) {
  Params params;
  params.set("experts", ints({4}));
  params.set("activation", strings({"silu"}));
  // Two tokens, two slots, four experts on one member: at most 4 rows.
  const std::vector<TensorView> tokens{fake(DType::F32, {2, 8}), fake(DType::I64, {2, 2})};
  EXPECT_TRUE(
      check("moe_dispatch", tokens, {fake(DType::F32, {4, 8}), fake(DType::I64, {1, 4})}, params)
          .ok());
  EXPECT_EQ(
      check("moe_dispatch", tokens, {fake(DType::F32, {3, 8}), fake(DType::I64, {1, 4})}, params)
          .message(),
      "moe_dispatch: rows has 3 rows, fewer than the 4 the worst case needs");
  const std::vector<TensorView> experts{fake(DType::F32, {4, 8}), fake(DType::I64, {1, 4}),
                                        fake(DType::F32, {4, 8, 5}), fake(DType::F32, {4, 5, 8})};
  EXPECT_TRUE(check("moe_experts", experts, {fake(DType::F32, {4, 8})}, params).ok());
  Params tanh = params;
  tanh.set("activation", strings({"tanh"}));
  EXPECT_EQ(check("moe_experts", experts, {fake(DType::F32, {4, 8})}, tanh).message(),
            "moe_experts: activation 'tanh' is not one of silu, gelu, gelu_tanh, relu");
  Params gated = params;
  gated.set("gated", ints({1}));
  EXPECT_EQ(check("moe_experts", experts, {fake(DType::F32, {4, 8})}, gated).message(),
            "moe_experts: gated takes rows, routing and 3 weights to one result; got 4 inputs "
            "and 1 outputs");
  const std::vector<TensorView> combine{fake(DType::F32, {4, 8}), fake(DType::I64, {1, 4}),
                                        fake(DType::I64, {2, 2}), fake(DType::F32, {2, 2})};
  EXPECT_TRUE(check("moe_combine", combine, {fake(DType::F32, {2, 8})}, params).ok());
  EXPECT_EQ(check("moe_combine", combine, {fake(DType::F32, {2, 7})}, params).message(),
            "moe_combine: result must be [T, 8] but got [2, 7]");
}

TEST(CudaTable, MoeKernelsRefuseFloat64) {
  Params params;
  params.set("experts", ints({4}));
  params.set("activation", strings({"silu"}));
  EXPECT_EQ(check("moe_dispatch", {fake(DType::F64, {2, 8}), fake(DType::I64, {2, 2})},
                  {fake(DType::F64, {4, 8}), fake(DType::I64, {1, 4})}, params)
                .message(),
            "moe_dispatch: float64 is not supported by the CUDA backend");
  EXPECT_EQ(check("moe_experts",
                  {fake(DType::F64, {4, 8}), fake(DType::I64, {1, 4}), fake(DType::F64, {4, 8, 5}),
                   fake(DType::F64, {4, 5, 8})},
                  {fake(DType::F64, {4, 8})}, params)
                .message(),
            "moe_experts: float64 is not supported by the CUDA backend");
  EXPECT_EQ(check("moe_combine",
                  {fake(DType::F64, {4, 8}), fake(DType::I64, {1, 4}), fake(DType::I64, {2, 2}),
                   fake(DType::F64, {2, 2})},
                  {fake(DType::F64, {2, 8})}, params)
                .message(),
            "moe_combine: float64 is not supported by the CUDA backend");
}

TEST(CudaTable, ChecksRefuseWhatOnlyTheCpuRuns) {
  Status status = check("exp", {fake(DType::F64, {4})}, {fake(DType::F64, {4})});
  EXPECT_EQ(status.message(), "exp: float64 is not supported by the CUDA backend");
  Params params;
  params.set("scale", number(1.0));
  status = check("attention",
                 {fake(DType::F32, {1, 1, 4, 512}), fake(DType::F32, {1, 1, 4, 512}),
                  fake(DType::F32, {1, 1, 4, 512})},
                 {fake(DType::F32, {1, 1, 4, 512})}, params);
  EXPECT_EQ(status.message(), "attention: head sizes above 256 are not supported by the CUDA "
                              "backend; got 512 and 512");
  std::vector<TensorView> inputs(17, fake(DType::F32, {4}));
  Params fused;
  fused.set("ops", strings({"add"}));
  fused.set("args", ints({0, 1}));
  status = check("fused", inputs, {fake(DType::F32, {4})}, fused);
  EXPECT_EQ(status.message(), "fused: the expression has 17 inputs and 1 ops; the CUDA kernel "
                              "takes at most 16 and 64");
}

} // namespace
} // namespace shardc::rt::cuda::test
