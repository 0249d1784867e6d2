//===- UnaryTest.cpp - Elementwise unary ops ------------------------------===//

#include "TestUtil.h"

#include <limits>

namespace shardc::constfold::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(UnaryTest, IntegerOpsWrap) {
  constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
  EXPECT_TRUE(isInts(unary(UnaryOp::Neg, i32({3}, {1, -2, kI32Min})), T::I32, {3},
                     {-1, 2, kI32Min}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Abs, i32({3}, {1, -2, kI32Min})), T::I32, {3},
                     {1, 2, kI32Min}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Neg, ints(T::U8, {2}, {0, 1})), T::U8, {2}, {0, 255}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Relu, i64({3}, {-5, 0, 5})), T::I64, {3}, {0, 0, 5}));
  EXPECT_TRUE(isInts(unary(UnaryOp::Floor, i64({1}, {-5})), T::I64, {1}, {-5}));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Sqrt, i32({1}, {4})), "sqrt needs a float operand but got i32"));
}

TEST(UnaryTest, Not) {
  EXPECT_TRUE(isInts(unary(UnaryOp::Not, bools({2}, {0, 1})), T::Bool, {2}, {1, 0}));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Not, i32({1}, {1})), "not needs a bool operand"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Not, f32({1}, {1})), "not needs a bool operand"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Neg, bools({1}, {1})), "but got bool"));
}

TEST(UnaryTest, BasicFloatOps) {
  HostTensor x = f32({4}, {-2.5, -0.5, 0.5, 2.5});
  EXPECT_TRUE(isFloats(unary(UnaryOp::Neg, x), T::F32, {4}, {2.5, 0.5, -0.5, -2.5}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Abs, x), T::F32, {4}, {2.5, 0.5, 0.5, 2.5}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Relu, x), T::F32, {4}, {0, 0, 0.5, 2.5}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Floor, x), T::F32, {4}, {-3, -1, 0, 2}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Ceil, x), T::F32, {4}, {-2, -0.0, 1, 3}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Reciprocal, x), T::F32, {4}, {-0.4, -2, 2, 0.4}, kF32Tolerance));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Relu, f32({1}, {kNaN})), T::F32, {1}, {kNaN}));
}

TEST(UnaryTest, SqrtExpLog) {
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sqrt, f32({3}, {4, 2, -1})), T::F32, {3},
                       {2, double(std::sqrt(2.0f)), kNaN}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Rsqrt, f32({2}, {4, 0})), T::F32, {2}, {0.5, kInf}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Exp, f32({3}, {0, 1, 1000})), T::F32, {3},
                       {1, double(float(std::exp(1.0))), kInf}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Log, f32({3}, {1, 0, -1})), T::F32, {3}, {0, -kInf, kNaN}));
  // exp(12) = 162754.79 overflows f16 (max 65504).
  EXPECT_TRUE(isFloats(unary(UnaryOp::Exp, floats(T::F16, {1}, {12})), T::F16, {1}, {kInf}));
}

TEST(UnaryTest, Activations) {
  HostTensor x = f64({5}, {-3, -0.5, 0, 1, 2.5});
  const double tol = 1e-15;
  EXPECT_TRUE(isFloats(unary(UnaryOp::Erf, x), T::F64, {5},
                       {-0.9999779095030014, -0.5204998778130465, 0, 0.8427007929497149,
                        0.999593047982555}, tol));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Tanh, x), T::F64, {5},
                       {-0.9950547536867305, -0.46211715726000974, 0, 0.7615941559557649,
                        0.9866142981514303}, tol));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sigmoid, x), T::F64, {5},
                       {0.04742587317756678, 0.3775406687981454, 0.5, 0.7310585786300049,
                        0.9241418199787566}, tol));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Gelu, x), T::F64, {5},
                       {-0.00404969409489031, -0.15426876936299344, 0, 0.8413447460685429,
                        2.4844758366855597}, tol));
  EXPECT_TRUE(isFloats(unary(UnaryOp::GeluTanh, x), T::F64, {5},
                       {-0.0036373920817729943, -0.15428599017485606, 0, 0.8411919906082768,
                        2.484915733910001}, tol));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Silu, x), T::F64, {5},
                       {-0.14227761953270035, -0.1887703343990727, 0, 0.7310585786300049,
                        2.3103545499468914}, tol));
}

TEST(UnaryTest, ActivationsStayFiniteForLargeInputs) {
  HostTensor x = f32({2}, {-1000, 1000});
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sigmoid, x), T::F32, {2}, {0, 1}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Silu, x), T::F32, {2}, {-0.0, 1000}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Gelu, x), T::F32, {2}, {-0.0, 1000}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::GeluTanh, x), T::F32, {2}, {-0.0, 1000}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Tanh, x), T::F32, {2}, {-1, 1}));
}

TEST(UnaryTest, ResultsAreRoundedToTheType) {
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sqrt, floats(T::BF16, {1}, {2})), T::BF16, {1},
                       {1.4140625}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sqrt, floats(T::F16, {1}, {2})), T::F16, {1},
                       {1.4140625}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Sqrt, f32({1}, {2})), T::F32, {1},
                       {double(std::sqrt(2.0f))}));
}

TEST(UnaryTest, KeepsShape) {
  EXPECT_TRUE(isFloats(unary(UnaryOp::Neg, f32({2, 0}, {})), T::F32, {2, 0}, {}));
  EXPECT_TRUE(isFloats(unary(UnaryOp::Neg, f32({}, {1})), T::F32, {}, {-1}));
}

} // namespace
} // namespace shardc::constfold::test
