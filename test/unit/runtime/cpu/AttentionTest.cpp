//===- AttentionTest.cpp - attention against a naive softmax(QK^T)V -------===//
#include "TestUtil.h"

#include <limits>

namespace shardc::rt::cpu::test {
namespace {

/// Offset in a tensor of `shape` broadcast to `full` for the full index
/// `linear` (row-major in `full`).
int64_t broadcastOffset(const Shape &shape, const Shape &full, int64_t linear) {
  int64_t offset = 0, stride = 1;
  for (size_t d = full.size(); d-- > 0;) {
    const int64_t index = linear % full[d];
    linear /= full[d];
    if (d + shape.size() >= full.size()) {
      const size_t sd = d + shape.size() - full.size();
      if (shape[sd] != 1)
        offset += index * stride;
      stride *= shape[sd];
    }
  }
  return offset;
}

/// softmax(scale q k^T + mask) v, literally: the whole score row in double.
/// A row with no visible key gives zeros (the kernel's documented rule).
std::vector<double> naiveAttention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
                                   const HostTensor *mask, double scale, bool causal) {
  const size_t rank = q.shape.size();
  const int64_t hq = q.shape[rank - 3], sq = q.shape[rank - 2], d = q.shape[rank - 1];
  const int64_t hkv = k.shape[rank - 3], sk = k.shape[rank - 2], dv = v.shape[rank - 1];
  const int64_t batch = q.numel() / std::max<int64_t>(hq * sq * d, 1);
  Shape scores(q.shape.begin(), q.shape.end() - 3);
  scores.insert(scores.end(), {hq, sq, sk});
  std::vector<double> out;
  std::vector<double> s(static_cast<size_t>(sk));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const int64_t kvh = h / (hq / hkv);
        double maximum = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < sk; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += getDouble(q, ((b * hq + h) * sq + i) * d + e) *
                   getDouble(k, ((b * hkv + kvh) * sk + j) * d + e);
          double score = scale * dot;
          if (mask) {
            const int64_t at =
                broadcastOffset(mask->shape, scores, ((b * hq + h) * sq + i) * sk + j);
            if (mask->dtype == DType::Bool)
              score = getInt(*mask, at) ? score : -std::numeric_limits<double>::infinity();
            else
              score += getDouble(*mask, at);
          }
          if (causal && j > i + sk - sq)
            score = -std::numeric_limits<double>::infinity();
          s[size_t(j)] = score;
          maximum = std::max(maximum, score);
        }
        double sum = 0;
        const bool noneVisible = maximum == -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < sk; ++j) {
          s[size_t(j)] = noneVisible ? 0 : std::exp(s[size_t(j)] - maximum);
          sum += s[size_t(j)];
        }
        for (int64_t e = 0; e < dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < sk; ++j)
            acc += s[size_t(j)] * getDouble(v, ((b * hkv + kvh) * sk + j) * dv + e);
          out.push_back(sum > 0 ? acc / sum : 0);
        }
      }
  return out;
}

struct Case {
  const char *name;
  Shape batch;
  int64_t hq, hkv, sq, sk, d, dv;
  bool causal;
  enum { None, BoolPadding, BoolFull, FloatRows } mask;
};

const Case kCases[] = {
    {"mha", {2}, 3, 3, 5, 5, 8, 8, false, Case::None},
    {"causal across blocks", {1}, 2, 2, 100, 100, 16, 16, true, Case::None},
    {"causal with a kv cache", {1}, 2, 2, 7, 130, 16, 16, true, Case::None},
    {"cross, Dv != D", {2}, 2, 2, 45, 77, 24, 40, false, Case::None},
    {"gqa causal", {1}, 8, 2, 33, 33, 16, 16, true, Case::None},
    {"mqa", {2}, 4, 1, 9, 70, 8, 8, false, Case::None},
    {"padding mask + causal", {3}, 2, 2, 20, 20, 8, 8, true, Case::BoolPadding},
    {"padding mask, gqa, cross", {3}, 4, 2, 12, 70, 8, 8, false, Case::BoolPadding},
    {"float mask rows", {2}, 2, 2, 17, 66, 8, 8, false, Case::FloatRows},
    {"float mask + causal", {1}, 2, 1, 40, 40, 8, 8, true, Case::FloatRows},
    {"bool mask per head", {2}, 3, 3, 10, 65, 8, 8, false, Case::BoolFull},
    {"two batch dims", {2, 2}, 2, 1, 6, 6, 4, 4, true, Case::None},
    {"no batch dims", {}, 2, 2, 6, 9, 4, 4, false, Case::BoolFull},
    {"decode", {2}, 4, 2, 1, 200, 16, 16, true, Case::BoolPadding},
    {"more queries than keys, causal", {1}, 1, 1, 10, 4, 4, 4, true, Case::None},
    {"gpt2 small", {1}, 12, 12, 128, 128, 64, 64, true, Case::None},
    // Head sizes that are not whole register tiles (FloatVec.h: 4, 8 or 16
    // lanes, tiles of 4 rows x 4 vectors): value columns left after whole
    // tiles and after whole vectors, and short key blocks.
    {"odd head sizes", {1}, 2, 1, 7, 23, 13, 7, true, Case::None},
    {"wide values", {1}, 2, 2, 37, 70, 80, 100, false, Case::FloatRows},
};

HostTensor makeMask(const Case &c, DType type, Rng &rng) {
  const int64_t b = numElements(c.batch);
  Shape shape = c.batch;
  switch (c.mask) {
  case Case::BoolPadding: {
    // [B..., 1, 1, Sk]: each batch keeps a prefix of keys (at least one).
    shape.insert(shape.end(), {1, 1, c.sk});
    HostTensor m(DType::Bool, shape);
    for (int64_t i = 0; i < b; ++i) {
      const int64_t keep = 1 + (i * 7) % c.sk;
      for (int64_t j = 0; j < c.sk; ++j)
        setInt(m, i * c.sk + j, j < keep);
    }
    return m;
  }
  case Case::BoolFull:
    shape.insert(shape.end(), {c.hq, c.sq, c.sk});
    return random(DType::Bool, shape, rng);
  case Case::FloatRows: {
    // [Sq, Sk], broadcast over batch and heads; a few -inf.
    HostTensor m = random(type, {c.sq, c.sk}, rng, -2, 2);
    for (int64_t i = 0; i < m.numel(); i += 5)
      setDouble(m, i, -std::numeric_limits<double>::infinity());
    return m;
  }
  case Case::None: break;
  }
  return HostTensor();
}

void runCase(const Case &c, DType type, double rtol, Rng &rng) {
  auto shape = [&](int64_t h, int64_t s, int64_t d) {
    Shape result = c.batch;
    result.insert(result.end(), {h, s, d});
    return result;
  };
  HostTensor q = random(type, shape(c.hq, c.sq, c.d), rng, -1, 1);
  HostTensor k = random(type, shape(c.hkv, c.sk, c.d), rng, -1, 1);
  HostTensor v = random(type, shape(c.hkv, c.sk, c.dv), rng, -1, 1);
  HostTensor mask = makeMask(c, type, rng);
  const HostTensor *maskPtr = c.mask == Case::None ? nullptr : &mask;
  const double scale = 1 / std::sqrt(double(c.d)) * 2; // sharper than usual softmax
  HostTensor out(type, shape(c.hq, c.sq, c.dv));
  ASSERT_TRUE(succeeded(attention(q.view(), k.view(), v.view(),
                                  maskPtr ? ptr(mask.view()) : nullptr, scale, c.causal,
                                  out.view())))
      << c.name;
  EXPECT_TRUE(closeTo(out, out.shape, naiveAttention(q, k, v, maskPtr, scale, c.causal), rtol,
                      rtol))
      << c.name << " " << dtypeName(type);
}

TEST(CpuAttentionTest, MatchesNaiveSoftmaxQKV) {
  ThreadScope threads(2);
  Rng rng(51);
  for (const Case &c : kCases)
    runCase(c, DType::F32, 1e-5, rng);
}

TEST(CpuAttentionTest, MatchesNaiveInOtherFloatTypes) {
  Rng rng(52);
  for (const Case &c : kCases) {
    if (c.sq * c.sk * c.hq > 100000)
      continue; // the fp32 run covers the big one
    runCase(c, DType::F64, 1e-12, rng);
    runCase(c, DType::F16, 4e-3, rng);
    runCase(c, DType::BF16, 3e-2, rng);
  }
}

TEST(CpuAttentionTest, RowsThatSeeNoKeyAreZero) {
  Rng rng(53);
  HostTensor q = random(DType::F32, {1, 1, 3, 4}, rng), k = random(DType::F32, {1, 1, 5, 4}, rng),
             v = random(DType::F32, {1, 1, 5, 4}, rng);
  HostTensor mask = make(DType::Bool, {1, 1, 3, 5}, {1, 0, 1, 0, 0, /**/ 0, 0, 0, 0, 0,
                                                     /**/ 0, 0, 0, 0, 1});
  HostTensor out = filled(DType::F32, {1, 1, 3, 4}, 42);
  ASSERT_TRUE(succeeded(attention(q.view(), k.view(), v.view(), ptr(mask.view()), 0.5, false,
                                  out.view())));
  for (int64_t e = 0; e < 4; ++e)
    EXPECT_EQ(getDouble(out, 4 + e), 0.0);
  // The last row sees key 4 only: it is v[4].
  for (int64_t e = 0; e < 4; ++e)
    EXPECT_NEAR(getDouble(out, 8 + e), getDouble(v, 16 + e), 1e-6);
  // An all -inf float mask is the same.
  HostTensor hide = filled(DType::F32, {5}, -std::numeric_limits<double>::infinity());
  ASSERT_TRUE(succeeded(attention(q.view(), k.view(), v.view(), ptr(hide.view()), 0.5, false,
                                  out.view())));
  for (int64_t i = 0; i < out.numel(); ++i)
    EXPECT_EQ(getDouble(out, i), 0.0);
}

TEST(CpuAttentionTest, OneAndTwoThreadsGiveTheSameBits) {
  Rng rng(54);
  HostTensor q = random(DType::F32, {2, 4, 70, 32}, rng), k = random(DType::F32, {2, 2, 90, 32}, rng),
             v = random(DType::F32, {2, 2, 90, 32}, rng);
  HostTensor one(DType::F32, {2, 4, 70, 32}), two(DType::F32, {2, 4, 70, 32});
  {
    ThreadScope threads(1);
    ASSERT_TRUE(succeeded(attention(q.view(), k.view(), v.view(), nullptr, 0.2, true, one.view())));
  }
  {
    ThreadScope threads(2);
    ASSERT_TRUE(succeeded(attention(q.view(), k.view(), v.view(), nullptr, 0.2, true, two.view())));
  }
  EXPECT_TRUE(sameBits(one, two));
}

TEST(CpuAttentionTest, RejectsBadOperands) {
  HostTensor q(DType::F32, {1, 3, 4, 8}), k(DType::F32, {1, 2, 5, 8}), v(DType::F32, {1, 2, 5, 8});
  HostTensor out(DType::F32, {1, 3, 4, 8});
  EXPECT_TRUE(failsWith(attention(q.view(), k.view(), v.view(), nullptr, 1, false, out.view()),
                        "attention: query heads must be a multiple of key/value heads; got 3 and 2"));
  HostTensor q2(DType::F32, {1, 2, 4, 8}), out2(DType::F32, {1, 2, 4, 8});
  HostTensor badMask(DType::Bool, {4, 4});
  EXPECT_TRUE(failsWith(attention(q2.view(), k.view(), v.view(), ptr(badMask.view()), 1, false,
                                  out2.view()),
                        "mask does not broadcast to the scores; expected [1, 2, 4, 5] but got [4, 4]"));
  HostTensor intMask(DType::I32, {4, 5});
  EXPECT_TRUE(failsWith(attention(q2.view(), k.view(), v.view(), ptr(intMask.view()), 1, false,
                                  out2.view()),
                        "mask must be bool or of the query's element type"));
  HostTensor k16(DType::F32, {1, 2, 5, 16});
  EXPECT_TRUE(failsWith(attention(q2.view(), k16.view(), v.view(), nullptr, 1, false, out2.view()),
                        "query and key head sizes differ; expected 8 but got 16"));
  HostTensor kb(DType::F32, {2, 2, 5, 8});
  EXPECT_TRUE(failsWith(attention(q2.view(), kb.view(), v.view(), nullptr, 1, false, out2.view()),
                        "batch dims differ"));
  HostTensor flat(DType::F32, {4, 8});
  EXPECT_TRUE(failsWith(attention(flat.view(), flat.view(), flat.view(), nullptr, 1, false,
                                  flat.view()),
                        "rank >= 3"));
}

} // namespace
} // namespace shardc::rt::cpu::test
