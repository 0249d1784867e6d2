//===- ElementwiseTest.cpp - unary, binary, compare, where, cast ----------===//
#include "CudaTestUtil.h"

#include "runtime/kernels/Shapes.h"

#include <cmath>
#include <limits>

namespace shardc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string describe(const std::string &kernel, DType dtype, const Shape &shape) {
  return kernel + " " + dtypeName(dtype) + " " + formatShape(shape);
}

TEST(CudaElementwise, UnaryFloat) {
  SHARDC_REQUIRE_GPU();
  Rng rng(1);
  // [3, 37]: scalar path with a tail; [4, 1024]: 16-byte vectors.
  for (const Shape &shape : {Shape{3, 37}, Shape{4, 1024}})
    for (DType dtype : kFloats)
      for (const char *kernel :
           {"neg", "abs", "exp", "cos", "sin", "erf", "tanh", "sigmoid", "relu", "silu", "gelu"}) {
        expectSameAsCpu(kernel, {random(dtype, shape, rng, -6, 6)}, {{dtype, shape}}, Params(),
                        describe(kernel, dtype, shape));
      }
  for (DType dtype : kFloats)
    for (const char *kernel : {"sqrt", "rsqrt", "reciprocal", "log"})
      expectSameAsCpu(kernel, {random(dtype, {5, 77}, rng, 0.01, 50)}, {{dtype, {5, 77}}}, Params(),
                      describe(kernel, dtype, {5, 77}));
  Params tanhForm;
  tanhForm.set("approximate_tanh", ints({1}));
  for (DType dtype : kFloats)
    expectSameAsCpu("gelu", {random(dtype, {1000}, rng, -8, 8)}, {{dtype, {1000}}}, tanhForm,
                    describe("gelu (tanh)", dtype, {1000}));
  // Specials: NaN stays NaN through relu; infinities through the rest.
  expectSameAsCpu("relu", {values(DType::F32, {4}, {kNaN, -kInf, kInf, -0.5})}, {{DType::F32, {4}}},
                  Params(), "relu specials");
  expectSameAsCpu("sigmoid", {values(DType::F32, {4}, {-1000, 1000, -kInf, kInf})},
                  {{DType::F32, {4}}}, Params(), "sigmoid specials");
}

TEST(CudaElementwise, UnaryInteger) {
  SHARDC_REQUIRE_GPU();
  for (DType dtype : {DType::I64, DType::I32, DType::I16, DType::I8, DType::U8}) {
    const double low = dtype == DType::U8 ? 0 : dtype == DType::I8 ? -128 : -2147483648.0;
    const HostTensor input = values(dtype, {7}, {low, -5, -1, 0, 1, 5, 100});
    for (const char *kernel : {"neg", "abs", "relu"})
      expectSameAsCpu(kernel, {input}, {{dtype, {7}}}, Params(), describe(kernel, dtype, {7}));
  }
  expectSameAsCpu("not", {values(DType::Bool, {5}, {0, 1, 1, 0, 1})}, {{DType::Bool, {5}}},
                  Params(), "not");
}

TEST(CudaElementwise, BinaryFloatBroadcasting) {
  SHARDC_REQUIRE_GPU();
  Rng rng(2);
  const std::pair<Shape, Shape> shapes[] = {{{8, 512}, {8, 512}}, // contiguous, vectorized
                                            {{3, 37}, {3, 37}},   // contiguous with a tail
                                            {{2, 3, 4}, {3, 1}},  // broadcasting both ways
                                            {{1}, {5, 7}},        // a scalar
                                            {{4, 1, 6}, {1, 5, 1}}};
  for (const auto &[a, b] : shapes)
    for (DType dtype : kFloats)
      for (const char *kernel : {"add", "sub", "mul", "div", "max", "min", "pow"}) {
        Shape out;
        ASSERT_TRUE(kernels::broadcastShapes(a, b, out));
        const bool power = std::string(kernel) == "pow";
        expectSameAsCpu(kernel,
                        {random(dtype, a, rng, power ? 0.1 : -4, 4), random(dtype, b, rng, -3, 3)},
                        {{dtype, out}}, Params(), describe(kernel, dtype, out));
      }
  // NaN wins max and min, on either side.
  const HostTensor x = values(DType::F32, {4}, {kNaN, 1, kNaN, -kInf});
  const HostTensor y = values(DType::F32, {4}, {1, kNaN, kNaN, 2});
  for (const char *kernel : {"max", "min"})
    expectSameAsCpu(kernel, {x, y}, {{DType::F32, {4}}}, Params(), std::string(kernel) + " NaN");
}

TEST(CudaElementwise, BinaryInteger) {
  SHARDC_REQUIRE_GPU();
  Rng rng(3);
  for (DType dtype : {DType::I64, DType::I32, DType::I8, DType::U8})
    for (const char *kernel : {"add", "sub", "mul", "max", "min", "div"}) {
      HostTensor a = random(dtype, {6, 9}, rng, dtype == DType::U8 ? 0 : -120, 120);
      HostTensor b = random(dtype, {9}, rng, 1, 100); // no zero divisors
      if (dtype != DType::U8)
        for (int64_t i = 0; i < 9; i += 2)
          set(b, i, -get(b, i)); // negative divisors truncate toward zero
      expectSameAsCpu(kernel, {a, b}, {{dtype, {6, 9}}}, Params(), describe(kernel, dtype, {6, 9}));
    }
  // Wrapping: INT32_MIN / -1 and overflowing products.
  const HostTensor a = values(DType::I32, {3}, {-2147483648.0, 65536, 7});
  const HostTensor b = values(DType::I32, {3}, {-1, 65536, -2});
  for (const char *kernel : {"div", "mul", "sub"})
    expectSameAsCpu(kernel, {a, b}, {{DType::I32, {3}}}, Params(), std::string(kernel) + " wraps");
  for (const char *kernel : {"and", "or"})
    expectSameAsCpu(kernel, {random(DType::Bool, {4, 5}, rng), random(DType::Bool, {5}, rng)},
                    {{DType::Bool, {4, 5}}}, Params(), kernel);
}

TEST(CudaElementwise, PowMixedTypes) {
  SHARDC_REQUIRE_GPU();
  const HostTensor bases = values(DType::I64, {8}, {2, -2, 3, 1, -1, -1, 5, 0});
  const HostTensor exponents = values(DType::I64, {8}, {10, 3, 40, -3, -3, -4, -1, 0});
  expectSameAsCpu("pow", {bases, exponents}, {{DType::I64, {8}}}, Params(), "int ** int");
  expectSameAsCpu("pow", {bases, values(DType::F32, {8}, {0.5, 2, 1.5, -1, 3, 2, 0.25, 1})},
                  {{DType::I64, {8}}}, Params(), "int ** float");
  expectSameAsCpu(
      "pow", {values(DType::F32, {4}, {2, 0.5, 9, -2}), values(DType::I32, {4}, {3, -2, 0, 3})},
      {{DType::F32, {4}}}, Params(), "float ** int");
  std::vector<HostTensor> results;
  Status status =
      runOnGpu("pow", {values(DType::I32, {2}, {0, 2}), values(DType::I32, {2}, {-1, 2})},
               {{DType::I32, {2}}}, Params(), results);
  EXPECT_EQ(status.message(), "pow: integer 0 to a negative power");
}

TEST(CudaElementwise, Compare) {
  SHARDC_REQUIRE_GPU();
  Rng rng(4);
  for (int64_t predicate = 0; predicate < 5; ++predicate) {
    Params params;
    params.set("predicate", ints({predicate}));
    const std::string what = "compare " + std::to_string(predicate);
    expectSameAsCpu("compare",
                    {values(DType::F32, {6}, {1, kNaN, -kInf, 2, 3, 0}),
                     values(DType::F32, {6}, {1, kNaN, -kInf, 3, 2, -0.0})},
                    {{DType::Bool, {6}}}, params, what + " float");
    for (DType dtype : {DType::I64, DType::U8, DType::Bool, DType::BF16, DType::F64})
      expectSameAsCpu("compare", {random(dtype, {3, 8}, rng, 0, 4), random(dtype, {8}, rng, 0, 4)},
                      {{DType::Bool, {3, 8}}}, params, what + " " + dtypeName(dtype));
  }
}

TEST(CudaElementwise, Where) {
  SHARDC_REQUIRE_GPU();
  Rng rng(5);
  for (DType dtype : {DType::F32, DType::F16, DType::I64, DType::Bool, DType::I8})
    expectSameAsCpu("where",
                    {random(DType::Bool, {4, 1, 6}, rng), random(dtype, {5, 1}, rng, -9, 9),
                     random(dtype, {4, 5, 6}, rng, -9, 9)},
                    {{dtype, {4, 5, 6}}}, Params(), std::string("where ") + dtypeName(dtype));
}

TEST(CudaElementwise, CastEveryPair) {
  SHARDC_REQUIRE_GPU();
  const DType types[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                         DType::I32, DType::I16, DType::I8,   DType::U8,  DType::Bool};
  // Fractions, negatives, values past the small types' ranges, specials.
  const std::vector<double> floats = {0.0,    -0.0,  0.5,     -1.5,    2.5,       127.9,
                                      -128.7, 300.2, 65519.0, 65520.0, 1e10,      -1e10,
                                      3.0e38, kInf,  -kInf,   kNaN,    1.0000001, 16777217.0};
  const std::vector<double> integers = {0,
                                        1,
                                        -1,
                                        127,
                                        -128,
                                        255,
                                        256,
                                        32767,
                                        -32768,
                                        2147483647.0,
                                        -2147483648.0,
                                        16777217,
                                        9007199254740993.0,
                                        -9007199254740993.0,
                                        4.0e18,
                                        65519,
                                        65520};
  for (DType from : types)
    for (DType to : types) {
      const bool isFloat =
          from == DType::F32 || from == DType::F16 || from == DType::BF16 || from == DType::F64;
      const std::vector<double> &source = isFloat ? floats : integers;
      const HostTensor input = values(from, {int64_t(source.size())}, source);
      expectSameAsCpu("cast", {input}, {{to, input.shape}}, Params(),
                      std::string("cast ") + dtypeName(from) + " to " + dtypeName(to),
                      /*exact=*/true);
    }
}

} // namespace
} // namespace shardc::rt::cuda::test
