//===- MatMulTest.cpp - matmul and linear ---------------------------------===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

/// numpy.matmul in double, written out: promote 1-D operands, broadcast the
/// batch dims, sum over K.
std::vector<double> naiveMatMul(const HostTensor &a, const HostTensor &b, Shape &shape) {
  Shape as = a.shape.size() == 1 ? Shape{1, a.shape[0]} : a.shape;
  Shape bs = b.shape.size() == 1 ? Shape{b.shape[0], 1} : b.shape;
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), rank - ab.size(), 1);
  bb.insert(bb.begin(), rank - bb.size(), 1);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d)
    batch[d] = ab[d] == 1 ? bb[d] : ab[d];
  shape = batch;
  if (a.shape.size() > 1)
    shape.push_back(m);
  if (b.shape.size() > 1)
    shape.push_back(n);
  std::vector<double> out;
  const int64_t batches = numElements(batch);
  for (int64_t index = 0; index < batches; ++index) {
    int64_t rest = index, ao = 0, bo = 0, aStride = 1, bStride = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      ao += (ab[d] == 1 ? 0 : i) * aStride;
      bo += (bb[d] == 1 ? 0 : i) * bStride;
      aStride *= ab[d];
      bStride *= bb[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += getDouble(a, ao * m * k + i * k + p) * getDouble(b, bo * k * n + p * n + j);
        out.push_back(sum);
      }
  }
  return out;
}

void checkMatMul(DType type, const Shape &as, const Shape &bs, double rtol, Rng &rng) {
  HostTensor a = random(type, as, rng), b = random(type, bs, rng);
  Shape shape;
  std::vector<double> want = naiveMatMul(a, b, shape);
  HostTensor out(type, shape);
  ASSERT_TRUE(succeeded(matmul(a.view(), b.view(), out.view())))
      << formatShape(as) << " x " << formatShape(bs);
  EXPECT_TRUE(closeTo(out, shape, want, rtol, rtol))
      << dtypeName(type) << " " << formatShape(as) << " x " << formatShape(bs);
}

const std::pair<Shape, Shape> kMatMulCases[] = {
    {{7, 13}, {13, 5}},             // odd sizes
    {{13}, {13, 6}},                // 1-D lhs: a row, dropped from the result
    {{6, 13}, {13}},                // 1-D rhs: a column, dropped
    {{13}, {13}},                   // vector dot: a scalar
    {{3, 4, 5}, {5, 6}},            // shared rhs: folded into one tall GEMM
    {{4, 5}, {3, 5, 6}},            // shared lhs: one GEMM per batch
    {{2, 1, 3, 4}, {5, 4, 6}},      // batch dims broadcast both ways
    {{2, 3, 4}, {2, 4, 2}},         // plain batches
    {{1, 3, 4}, {2, 4, 1}},         // N = 1
    {{2, 0, 4}, {4, 3}},            // M = 0
    {{2, 3, 0}, {0, 5}},            // K = 0: zeros
    {{65, 130}, {130, 67}},         // big enough for the GEMM's own blocking
};

TEST(CpuMatMulTest, MatchesNaiveMatMulForFloatTypes) {
  Rng rng(21);
  for (const auto &[as, bs] : kMatMulCases) {
    checkMatMul(DType::F32, as, bs, 1e-5, rng);
    checkMatMul(DType::F64, as, bs, 1e-12, rng);
    checkMatMul(DType::F16, as, bs, 1e-2, rng);
    checkMatMul(DType::BF16, as, bs, 3e-2, rng);
  }
}

TEST(CpuMatMulTest, IntegerMatMulWrapsLikeTheReference) {
  Rng rng(22);
  for (DType type : {DType::I32, DType::I64, DType::I8}) {
    HostTensor a = random(type, {2, 3, 7}, rng, -100, 100), b = random(type, {7, 4}, rng, -100, 100);
    CTensor want = expectOk(cf::matmul(toConst(a), toConst(b)));
    HostTensor out(type, want.shape);
    ASSERT_TRUE(succeeded(matmul(a.view(), b.view(), out.view())));
    EXPECT_TRUE(closeTo(out, want, 0)) << dtypeName(type);
  }
}

TEST(CpuMatMulTest, SameResultWithOneOrTwoThreads) {
  Rng rng(23);
  HostTensor a = random(DType::F32, {4, 96, 80}, rng), b = random(DType::F32, {4, 80, 72}, rng);
  HostTensor one(DType::F32, {4, 96, 72}), two(DType::F32, {4, 96, 72});
  {
    ThreadScope threads(1);
    ASSERT_TRUE(succeeded(matmul(a.view(), b.view(), one.view())));
  }
  {
    ThreadScope threads(2);
    ASSERT_TRUE(succeeded(matmul(a.view(), b.view(), two.view())));
  }
  Shape shape;
  const std::vector<double> want = naiveMatMul(a, b, shape);
  EXPECT_TRUE(closeTo(one, shape, want, 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(two, shape, want, 1e-5, 1e-5));
}

/// `t` with its last two dims swapped, as a transpose kernel stores it.
HostTensor swapLastTwo(HostTensor &t) {
  std::vector<int64_t> perm(t.shape.size());
  for (size_t d = 0; d < perm.size(); ++d)
    perm[d] = int64_t(d);
  std::swap(perm[perm.size() - 2], perm.back());
  Shape shape = t.shape;
  std::swap(shape[shape.size() - 2], shape.back());
  HostTensor out(t.dtype, shape);
  EXPECT_TRUE(succeeded(transpose(t.view(), perm, out.view())));
  return out;
}

// A transposed operand stored with its last two dims swapped gives the
// product of the untransposed one, whichever path multiplies it: one GEMM
// per batch, batches shared out among two threads (48 of them, as
// attention's heads), a shared rhs, the fp64 and integer loops.
TEST(CpuMatMulTest, TransposedOperandsMatchTheUntransposedProduct) {
  Rng rng(24);
  const std::pair<Shape, Shape> cases[] = {
      {{7, 13}, {13, 5}}, {{3, 4, 5}, {5, 6}}, {{2, 1, 3, 4}, {5, 4, 6}},
      {{4, 12, 16, 8}, {4, 12, 8, 16}}, {{65, 130}, {130, 67}}};
  for (int threads : {1, 2}) {
    ThreadScope scope(threads);
    for (const auto &[as, bs] : cases)
      for (DType type : {DType::F32, DType::F64, DType::F16, DType::I32})
        for (int flags = 1; flags < 4; ++flags) {
          const bool transA = flags & 1, transB = flags & 2;
          const double range = type == DType::I32 ? 8 : 1;
          HostTensor a = random(type, as, rng, -range, range);
          HostTensor b = random(type, bs, rng, -range, range);
          Shape shape;
          const std::vector<double> want = naiveMatMul(a, b, shape);
          HostTensor out(type, shape);
          HostTensor lhs = transA ? swapLastTwo(a) : a, rhs = transB ? swapLastTwo(b) : b;
          ASSERT_TRUE(succeeded(matmul(lhs.view(), rhs.view(), out.view(), transA, transB)))
              << formatShape(as) << " x " << formatShape(bs);
          const double rtol = type == DType::F16 ? 1e-2 : type == DType::F32 ? 1e-5 : 1e-12;
          EXPECT_TRUE(closeTo(out, shape, want, rtol, rtol))
              << dtypeName(type) << " " << formatShape(as) << " x " << formatShape(bs)
              << " transA " << transA << " transB " << transB << " threads " << threads;
        }
  }
}

TEST(CpuMatMulTest, RejectsATransposedVector) {
  HostTensor v(DType::F32, {3}), m(DType::F32, {3, 2}), out(DType::F32, {2});
  EXPECT_TRUE(failsWith(matmul(v.view(), m.view(), out.view(), true, false),
                        "matmul: a transposed operand needs rank >= 2 but got [3] and [3, 2]"));
}

TEST(CpuMatMulTest, RejectsBadOperands) {
  HostTensor a(DType::F32, {2, 3}), b(DType::F32, {4, 5}), out(DType::F32, {2, 5});
  EXPECT_TRUE(failsWith(matmul(a.view(), b.view(), out.view()),
                        "matmul: contracted dims differ; lhs [2, 3] has 3 but rhs [4, 5] has 4"));
  HostTensor c(DType::F32, {2, 3, 4}), d(DType::F32, {3, 4, 5}), cd(DType::F32, {2, 3, 5});
  EXPECT_TRUE(failsWith(matmul(c.view(), d.view(), cd.view()),
                        "batch dims [2] and [3] do not broadcast"));
  HostTensor e(DType::F32, {3, 5}), wrong(DType::F32, {5, 2});
  EXPECT_TRUE(failsWith(matmul(a.view(), e.view(), wrong.view()),
                        "result shape differs; expected [2, 5] but got [5, 2]"));
  HostTensor scalar(DType::F32, {});
  EXPECT_TRUE(failsWith(matmul(scalar.view(), e.view(), out.view()), "rank >= 1"));
  HostTensor i(DType::I32, {3, 5});
  EXPECT_TRUE(failsWith(matmul(a.view(), i.view(), out.view()), "rhs element type differs"));
}

/// input @ weight (+ bias), in double.
TEST(CpuLinearTest, MatchesNaiveWithAndWithoutBiasAndTranspose) {
  Rng rng(24);
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const double rtol = type == DType::F16 ? 1e-2 : type == DType::BF16 ? 3e-2 : 1e-5;
    for (bool transposed : {false, true}) {
      for (bool withBias : {false, true}) {
        for (const Shape &xs : {Shape{2, 5, 19}, Shape{19}, Shape{1, 1, 19}, Shape{0, 19}}) {
          HostTensor x = random(type, xs, rng);
          HostTensor w = random(type, transposed ? Shape{11, 19} : Shape{19, 11}, rng);
          HostTensor b = random(type, {11}, rng);
          Shape shape = xs;
          shape.back() = 11;
          HostTensor out(type, shape);
          ASSERT_TRUE(succeeded(linear(x.view(), w.view(), withBias ? ptr(b.view()) : nullptr,
                                       transposed, out.view())));
          EXPECT_TRUE(closeTo(out, shape, naiveLinear(x, w, withBias ? &b : nullptr, transposed),
                              rtol, rtol))
              << dtypeName(type) << " transposed=" << transposed << " bias=" << withBias;
        }
      }
    }
  }
}

TEST(CpuLinearTest, ZeroInputFeaturesGiveTheBias) {
  HostTensor x(DType::F32, {3, 0}), w(DType::F32, {0, 2});
  HostTensor b = make(DType::F32, {2}, {1.5, -2});
  HostTensor out = filled(DType::F32, {3, 2}, 7);
  ASSERT_TRUE(succeeded(linear(x.view(), w.view(), ptr(b.view()), false, out.view())));
  EXPECT_TRUE(closeTo(out, {3, 2}, {1.5, -2, 1.5, -2, 1.5, -2}, 0));
  ASSERT_TRUE(succeeded(linear(x.view(), w.view(), nullptr, false, out.view())));
  EXPECT_TRUE(closeTo(out, {3, 2}, {0, 0, 0, 0, 0, 0}, 0));
}

TEST(CpuLinearTest, RejectsBadOperands) {
  HostTensor x(DType::F32, {4, 8}), w(DType::F32, {8, 3}), out(DType::F32, {4, 3});
  HostTensor badBias(DType::F32, {4}), wt(DType::F32, {3, 8}), i(DType::I32, {4, 8});
  EXPECT_TRUE(failsWith(linear(x.view(), wt.view(), nullptr, false, out.view()),
                        "linear: input features differ from the weight's; expected 3 but got 8"));
  EXPECT_TRUE(failsWith(linear(x.view(), w.view(), ptr(badBias.view()), false, out.view()),
                        "bias shape differs; expected [3] but got [4]"));
  EXPECT_TRUE(failsWith(linear(i.view(), w.view(), nullptr, false, out.view()),
                        "needs a float input but got int32"));
  EXPECT_TRUE(succeeded(linear(x.view(), wt.view(), nullptr, true, out.view())));
}

} // namespace
} // namespace shardc::rt::cpu::test
