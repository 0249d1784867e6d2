//===- ElementwiseTest.cpp - unary, binary, compare, where ----------------===//
#include "TestUtil.h"

#include <limits>

namespace shardc::rt::cpu::test {
namespace {

cf::UnaryOp reference(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return cf::UnaryOp::Neg;
  case UnaryOp::Abs: return cf::UnaryOp::Abs;
  case UnaryOp::Sqrt: return cf::UnaryOp::Sqrt;
  case UnaryOp::Rsqrt: return cf::UnaryOp::Rsqrt;
  case UnaryOp::Reciprocal: return cf::UnaryOp::Reciprocal;
  case UnaryOp::Exp: return cf::UnaryOp::Exp;
  case UnaryOp::Log: return cf::UnaryOp::Log;
  case UnaryOp::Cos: return cf::UnaryOp::Cos;
  case UnaryOp::Sin: return cf::UnaryOp::Sin;
  case UnaryOp::Erf: return cf::UnaryOp::Erf;
  case UnaryOp::Tanh: return cf::UnaryOp::Tanh;
  case UnaryOp::Sigmoid: return cf::UnaryOp::Sigmoid;
  case UnaryOp::Relu: return cf::UnaryOp::Relu;
  case UnaryOp::Gelu: return cf::UnaryOp::Gelu;
  case UnaryOp::GeluTanh: return cf::UnaryOp::GeluTanh;
  case UnaryOp::Silu: return cf::UnaryOp::Silu;
  case UnaryOp::Not: return cf::UnaryOp::Not;
  case UnaryOp::Floor: return cf::UnaryOp::Floor;
  case UnaryOp::Ceil: return cf::UnaryOp::Ceil;
  case UnaryOp::Round: return cf::UnaryOp::Round;
  case UnaryOp::Sign: return cf::UnaryOp::Sign;
  }
  return cf::UnaryOp::Neg;
}

cf::BinaryOp reference(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return cf::BinaryOp::Add;
  case BinaryOp::Sub: return cf::BinaryOp::Sub;
  case BinaryOp::Mul: return cf::BinaryOp::Mul;
  case BinaryOp::Div: return cf::BinaryOp::Div;
  case BinaryOp::Pow: return cf::BinaryOp::Pow;
  case BinaryOp::Max: return cf::BinaryOp::Max;
  case BinaryOp::Min: return cf::BinaryOp::Min;
  case BinaryOp::And: return cf::BinaryOp::And;
  case BinaryOp::Or: return cf::BinaryOp::Or;
  case BinaryOp::Mod: return cf::BinaryOp::Mod;
  case BinaryOp::FMod: return cf::BinaryOp::FMod;
  }
  return cf::BinaryOp::Add;
}

cf::BinaryOp reference(ComparePredicate p) {
  switch (p) {
  case ComparePredicate::Eq: return cf::BinaryOp::Equal;
  case ComparePredicate::Lt: return cf::BinaryOp::Less;
  case ComparePredicate::Le: return cf::BinaryOp::LessEqual;
  case ComparePredicate::Gt: return cf::BinaryOp::Greater;
  case ComparePredicate::Ge: return cf::BinaryOp::GreaterEqual;
  }
  return cf::BinaryOp::Equal;
}

/// Relative tolerance of one rounding (plus libm's few ulps) per type.
double tolerance(DType t) {
  switch (t) {
  case DType::F16: return 2e-3;
  case DType::BF16: return 1.6e-2;
  case DType::F64: return 1e-12;
  default: return 2e-6;
  }
}

const UnaryOp kFloatUnary[] = {
    UnaryOp::Neg,  UnaryOp::Abs,  UnaryOp::Sqrt,    UnaryOp::Rsqrt, UnaryOp::Reciprocal,
    UnaryOp::Exp,  UnaryOp::Log,  UnaryOp::Cos,     UnaryOp::Sin,   UnaryOp::Erf,
    UnaryOp::Tanh, UnaryOp::Sigmoid, UnaryOp::Relu, UnaryOp::Gelu,  UnaryOp::GeluTanh,
    UnaryOp::Silu, UnaryOp::Floor, UnaryOp::Ceil, UnaryOp::Round, UnaryOp::Sign};

TEST(CpuUnaryTest, FloatOpsMatchReferenceForEveryFloatType) {
  Rng rng(1);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    for (UnaryOp op : kFloatUnary) {
      // Domains where the op is finite; odd sizes cross any vector width.
      const bool positive = op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt || op == UnaryOp::Log;
      HostTensor x = random(type, {3, 37}, rng, positive ? 0.01 : -6, positive ? 20 : 6);
      HostTensor out(type, {3, 37});
      ASSERT_TRUE(succeeded(unary(op, x.view(), out.view()))) << unaryOpName(op);
      CTensor want = expectOk(cf::unary(reference(op), toConst(x)));
      EXPECT_TRUE(closeTo(out, want, tolerance(type), 1e-6))
          << unaryOpName(op) << " " << dtypeName(type);
    }
  }
}

TEST(CpuUnaryTest, GeluTailsKeepTheirPrecision) {
  // 0.5 x (1 + erf(x / sqrt 2)) cancels to garbage far left (even in double,
  // which is why this reference uses erfc and the sigmoid form).
  const std::vector<double> xs = {-5, -8, -10, -12, 3};
  HostTensor x = make(DType::F32, {5}, xs);
  std::vector<double> exact, tanhForm;
  for (double v : xs) {
    exact.push_back(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
    const double u = 2 * 0.7978845608028654 * (v + 0.044715 * v * v * v);
    tanhForm.push_back(v / (1 + std::exp(-u)));
  }
  HostTensor out(DType::F32, {5});
  ASSERT_TRUE(succeeded(gelu(x.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {5}, exact, 1e-5));
  ASSERT_TRUE(succeeded(gelu(x.view(), out.view(), /*approximateTanh=*/true)));
  EXPECT_TRUE(closeTo(out, {5}, tanhForm, 1e-5, 1e-37));
}

TEST(CpuUnaryTest, SigmoidAndSiluSaturateWithoutOverflow) {
  HostTensor x = make(DType::F32, {4}, {-1000, 1000, -80, 0});
  HostTensor out(DType::F32, {4});
  ASSERT_TRUE(succeeded(unary(UnaryOp::Sigmoid, x.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {4}, {0, 1, std::exp(-80.0), 0.5}, 1e-5));
  ASSERT_TRUE(succeeded(unary(UnaryOp::Silu, x.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {4}, {0, 1000, -80 * std::exp(-80.0), 0}, 1e-5));
}

TEST(CpuUnaryTest, ReluKeepsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x = make(DType::F32, {3}, {-1, nan, 2});
  HostTensor out(DType::F32, {3});
  ASSERT_TRUE(succeeded(relu(x.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {3}, {0, nan, 2}, 0));
}

TEST(CpuUnaryTest, IntegerNegAbsReluWrap) {
  for (DType type : {DType::I8, DType::I32, DType::I64, DType::U8}) {
    HostTensor x(type, {6});
    const int64_t values[] = {-128, -5, 0, 7, 127, -1};
    for (int i = 0; i < 6; ++i)
      setInt(x, i, values[i]);
    for (UnaryOp op : {UnaryOp::Neg, UnaryOp::Abs, UnaryOp::Relu}) {
      HostTensor out(type, {6});
      ASSERT_TRUE(succeeded(unary(op, x.view(), out.view())));
      EXPECT_TRUE(closeTo(out, expectOk(cf::unary(reference(op), toConst(x))), 0))
          << unaryOpName(op) << " " << dtypeName(type);
    }
  }
}

TEST(CpuUnaryTest, NotNegatesBools) {
  HostTensor x = make(DType::Bool, {4}, {1, 0, 0, 1});
  HostTensor out(DType::Bool, {4});
  ASSERT_TRUE(succeeded(logicalNot(x.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {4}, {0, 1, 1, 0}, 0));
}

TEST(CpuUnaryTest, LargeInputsRunInParallelAndInPlace) {
  ThreadScope threads(2);
  Rng rng(2);
  HostTensor x = random(DType::F32, {1000, 257}, rng, -3, 3);
  CTensor want = expectOk(cf::unary(cf::UnaryOp::Tanh, toConst(x)));
  ASSERT_TRUE(succeeded(unary(UnaryOp::Tanh, x.view(), x.view()))); // in place
  EXPECT_TRUE(closeTo(x, want, 2e-6));
}

TEST(CpuUnaryTest, RejectsBadOperands) {
  HostTensor f(DType::F32, {2, 3}), i(DType::I32, {2, 3}), wrong(DType::F32, {3, 2});
  EXPECT_TRUE(failsWith(unary(UnaryOp::Exp, i.view(), i.view()),
                        "exp: needs a float input but got int32"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Not, f.view(), f.view()), "needs a bool input"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Neg, f.view(), wrong.view()),
                        "neg: result shape differs; expected [2, 3] but got [3, 2]"));
  EXPECT_TRUE(failsWith(unary(UnaryOp::Neg, f.view(), i.view()),
                        "result element type differs; expected float32 but got int32"));
  TensorView missing{nullptr, DType::F32, {2}};
  EXPECT_TRUE(failsWith(unary(UnaryOp::Neg, missing, f.view()), "input [2] has no data"));
}

/// Shape pairs covering numpy broadcasting: trailing dims, both sides, missing
/// leading dims, scalars, size-0 dims, and a large same-shape pair.
const std::pair<Shape, Shape> kBroadcastCases[] = {
    {{2, 3, 5}, {2, 3, 5}}, {{2, 3, 5}, {5}},     {{2, 1, 5}, {3, 1}},
    {{1}, {4, 1, 7}},       {{}, {3, 2}},          {{4, 3}, {}},
    {{4, 1}, {1, 9}},       {{0, 3}, {3}},         {{2, 1, 3, 1}, {1, 4, 1, 6}},
    {{300, 129}, {300, 129}}, {{300, 129}, {300, 1}}};

TEST(CpuBinaryTest, ArithmeticMatchesReferenceWithBroadcasting) {
  ThreadScope threads(2);
  Rng rng(3);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64,
                     DType::I8, DType::U8, DType::I16}) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                        BinaryOp::Max, BinaryOp::Min, BinaryOp::Mod, BinaryOp::FMod}) {
      for (const auto &[ls, rs] : kBroadcastCases) {
        const bool small = type == DType::I8 || type == DType::U8;
        HostTensor a = random(type, ls, rng, small ? 0 : -50, small ? 100 : 50);
        HostTensor b = random(type, rs, rng, small ? 1 : -50, small ? 100 : 50);
        if (op == BinaryOp::Div || op == BinaryOp::Mod || op == BinaryOp::FMod)
          for (int64_t i = 0; i < b.numel(); ++i)
            if (getDouble(b, i) == 0)
              setDouble(b, i, 3); // integer division by zero is an error
        CTensor want = expectOk(cf::binary(reference(op), toConst(a), toConst(b)));
        HostTensor out(type, want.shape);
        ASSERT_TRUE(succeeded(binary(op, a.view(), b.view(), out.view())));
        EXPECT_TRUE(closeTo(out, want, tolerance(type)))
            << binaryOpName(op) << " " << dtypeName(type) << " " << formatShape(ls) << " "
            << formatShape(rs);
      }
    }
  }
}

TEST(CpuBinaryTest, IntegerEdgeCasesWrapLikeTheReference) {
  HostTensor a(DType::I32, {4}), b(DType::I32, {4});
  const int64_t av[] = {std::numeric_limits<int32_t>::min(), 7, -7, 2147483647};
  const int64_t bv[] = {-1, -2, 2, 1};
  for (int i = 0; i < 4; ++i) {
    setInt(a, i, av[i]);
    setInt(b, i, bv[i]);
  }
  for (BinaryOp op : {BinaryOp::Div, BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub}) {
    HostTensor out(DType::I32, {4});
    ASSERT_TRUE(succeeded(binary(op, a.view(), b.view(), out.view())));
    EXPECT_TRUE(closeTo(out, expectOk(cf::binary(reference(op), toConst(a), toConst(b))), 0))
        << binaryOpName(op);
  }
}

TEST(CpuBinaryTest, MaxMinPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor a = make(DType::F32, {3}, {nan, 1, 2});
  HostTensor b = make(DType::F32, {3}, {1, nan, 3});
  HostTensor out(DType::F32, {3});
  ASSERT_TRUE(succeeded(maximum(a.view(), b.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {3}, {nan, nan, 3}, 0));
  ASSERT_TRUE(succeeded(minimum(a.view(), b.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {3}, {nan, nan, 2}, 0));
}

TEST(CpuBinaryTest, PowAcceptsAnExponentOfAnotherType) {
  Rng rng(4);
  struct Case {
    DType base, exponent;
    double lo, hi, elo, ehi;
  };
  const Case cases[] = {{DType::F32, DType::F32, 0.1, 3, -2, 2},
                        {DType::F32, DType::I64, -3, 3, -3, 4},
                        {DType::F16, DType::I32, -3, 3, 0, 3},
                        {DType::I32, DType::I32, -4, 4, 0, 9},
                        {DType::I64, DType::I8, -3, 3, -2, 5},
                        {DType::I32, DType::F32, 1, 9, 0, 2}};
  for (const Case &c : cases) {
    HostTensor a = random(c.base, {4, 6}, rng, c.lo, c.hi);
    HostTensor b = random(c.exponent, {6}, rng, c.elo, c.ehi);
    if (!isFloat(c.base))
      for (int64_t i = 0; i < a.numel(); ++i)
        if (getInt(a, i) == 0)
          setInt(a, i, 2); // 0 ** negative is an error
    CTensor want = expectOk(cf::binary(cf::BinaryOp::Pow, toConst(a), toConst(b)));
    HostTensor out(c.base, {4, 6});
    ASSERT_TRUE(succeeded(pow(a.view(), b.view(), out.view())));
    EXPECT_TRUE(closeTo(out, want, tolerance(c.base), 1e-6))
        << dtypeName(c.base) << " ** " << dtypeName(c.exponent);
  }
}

TEST(CpuBinaryTest, LogicalOps) {
  HostTensor a = make(DType::Bool, {2, 2}, {0, 0, 1, 1});
  HostTensor b = make(DType::Bool, {2}, {0, 1});
  HostTensor out(DType::Bool, {2, 2});
  ASSERT_TRUE(succeeded(logicalAnd(a.view(), b.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {2, 2}, {0, 0, 0, 1}, 0));
  ASSERT_TRUE(succeeded(logicalOr(a.view(), b.view(), out.view())));
  EXPECT_TRUE(closeTo(out, {2, 2}, {0, 1, 1, 1}, 0));
}

TEST(CpuBinaryTest, InPlaceOnTheSameShapeOperand) {
  Rng rng(5);
  HostTensor a = random(DType::F32, {64, 33}, rng), b = random(DType::F32, {33}, rng);
  CTensor want = expectOk(cf::binary(cf::BinaryOp::Mul, toConst(a), toConst(b)));
  ASSERT_TRUE(succeeded(mul(a.view(), b.view(), a.view())));
  EXPECT_TRUE(closeTo(a, want, 1e-7));
}

TEST(CpuBinaryTest, RejectsBadOperands) {
  HostTensor a(DType::I32, {2, 3}), b(DType::I32, {2}), zero(DType::I32, {3}),
      out(DType::I32, {2, 3}), f(DType::F32, {3}), bools(DType::Bool, {3});
  EXPECT_TRUE(failsWith(add(a.view(), b.view(), out.view()),
                        "add: shapes [2, 3] and [2] do not broadcast"));
  EXPECT_TRUE(failsWith(add(a.view(), f.view(), out.view()),
                        "needs integer or float operands of one type but got int32 and float32"));
  EXPECT_TRUE(failsWith(div(a.view(), zero.view(), out.view()), "integer division by zero"));
  EXPECT_TRUE(failsWith(add(bools.view(), bools.view(), bools.view()), "but got bool and bool"));
  EXPECT_TRUE(failsWith(logicalAnd(f.view(), f.view(), f.view()), "needs bool operands"));
  HostTensor wrong(DType::I32, {3, 3});
  EXPECT_TRUE(failsWith(add(a.view(), zero.view(), wrong.view()),
                        "result shape differs; expected [2, 3] but got [3, 3]"));
  HostTensor base = make(DType::I32, {1}, {0}), exponent = make(DType::I32, {1}, {-1});
  HostTensor one(DType::I32, {1});
  EXPECT_TRUE(failsWith(pow(base.view(), exponent.view(), one.view()),
                        "integer 0 to a negative power"));
}

TEST(CpuCompareTest, MatchesReferenceForEveryType) {
  Rng rng(6);
  for (DType type : {DType::F32, DType::F16, DType::F64, DType::I64, DType::I8, DType::U8,
                     DType::Bool}) {
    for (ComparePredicate p : {ComparePredicate::Eq, ComparePredicate::Lt, ComparePredicate::Le,
                               ComparePredicate::Gt, ComparePredicate::Ge}) {
      for (const auto &[ls, rs] : kBroadcastCases) {
        // Few distinct values, so that equality actually happens.
        HostTensor a = random(type, ls, rng, 0, 3), b = random(type, rs, rng, 0, 3);
        if (isFloat(type))
          for (HostTensor *t : {&a, &b})
            for (int64_t i = 0; i < t->numel(); ++i)
              setDouble(*t, i, std::round(getDouble(*t, i)));
        CTensor want = expectOk(cf::binary(reference(p), toConst(a), toConst(b)));
        HostTensor out(DType::Bool, want.shape);
        ASSERT_TRUE(succeeded(compare(p, a.view(), b.view(), out.view())));
        EXPECT_TRUE(closeTo(out, want, 0))
            << comparePredicateName(p) << " " << dtypeName(type);
      }
    }
  }
}

TEST(CpuCompareTest, NaNComparesFalse) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor a = make(DType::F32, {2}, {nan, 1});
  HostTensor out(DType::Bool, {2});
  for (ComparePredicate p : {ComparePredicate::Eq, ComparePredicate::Lt, ComparePredicate::Ge}) {
    ASSERT_TRUE(succeeded(compare(p, a.view(), a.view(), out.view())));
    EXPECT_EQ(getInt(out, 0), 0) << comparePredicateName(p);
  }
}

TEST(CpuCompareTest, RejectsMixedTypesAndNonBoolResults) {
  HostTensor a(DType::F32, {2}), b(DType::F64, {2}), out(DType::Bool, {2}), f(DType::F32, {2});
  EXPECT_TRUE(failsWith(compare(ComparePredicate::Eq, a.view(), b.view(), out.view()),
                        "compare: rhs element type differs; expected float32 but got float64"));
  EXPECT_TRUE(failsWith(compare(ComparePredicate::Eq, a.view(), a.view(), f.view()),
                        "result element type differs; expected bool"));
}

TEST(CpuWhereTest, MatchesReferenceWithThreeWayBroadcasting) {
  ThreadScope threads(2);
  Rng rng(7);
  const Shape shapes[][3] = {{{2, 3}, {2, 3}, {2, 3}},  {{3, 1}, {1, 4}, {}},
                             {{1, 5}, {2, 1, 1}, {5}},  {{}, {3}, {2, 3}},
                             {{400, 1}, {400, 100}, {100}}, {{0, 2}, {2}, {1}}};
  for (DType type : {DType::F32, DType::I64, DType::F16, DType::Bool, DType::I8}) {
    for (const auto &s : shapes) {
      HostTensor c = random(DType::Bool, s[0], rng), x = random(type, s[1], rng, -9, 9),
                 y = random(type, s[2], rng, -9, 9);
      CTensor want = expectOk(cf::where(toConst(c), toConst(x), toConst(y)));
      HostTensor out(type, want.shape);
      ASSERT_TRUE(succeeded(where(c.view(), x.view(), y.view(), out.view())));
      EXPECT_TRUE(closeTo(out, want, 0)) << dtypeName(type);
    }
  }
}

TEST(CpuWhereTest, RejectsBadOperands) {
  HostTensor c(DType::Bool, {2}), f(DType::F32, {2}), i(DType::I32, {2}), out(DType::F32, {2});
  EXPECT_TRUE(failsWith(where(f.view(), f.view(), f.view(), out.view()),
                        "where: condition element type differs; expected bool"));
  EXPECT_TRUE(failsWith(where(c.view(), f.view(), i.view(), out.view()), "false value"));
  HostTensor three(DType::F32, {3});
  EXPECT_TRUE(failsWith(where(c.view(), three.view(), f.view(), out.view()), "do not broadcast"));
}

} // namespace
} // namespace shardc::rt::cpu::test
