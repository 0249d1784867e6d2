//===- RotaryTest.cpp - rotary position embedding -------------------------===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

/// graph.rotary as GraphOps.td words it, per element.
std::vector<double> naiveRotary(const HostTensor &x, const HostTensor &cos, const HostTensor &sin,
                                bool interleaved) {
  const int64_t f = x.shape.back(), r = cos.shape.back(), rows = x.numel() / f;
  const Shape rowsShape(x.shape.begin(), x.shape.end() - 1);
  const Shape tableShape(cos.shape.begin(), cos.shape.end() - 1);
  std::vector<double> out;
  for (int64_t row = 0; row < rows; ++row) {
    // The table row: right-aligned broadcast of tableShape onto rowsShape.
    int64_t rest = row, tableRow = 0, stride = 1;
    for (size_t d = rowsShape.size(); d-- > 0;) {
      const int64_t index = rest % rowsShape[d];
      rest /= rowsShape[d];
      if (d + tableShape.size() >= rowsShape.size()) {
        const size_t td = d + tableShape.size() - rowsShape.size();
        if (tableShape[td] != 1)
          tableRow += index * stride;
        stride *= tableShape[td];
      }
    }
    for (int64_t i = 0; i < f; ++i) {
      const double xi = getDouble(x, row * f + i);
      if (i >= r) {
        out.push_back(xi);
        continue;
      }
      const bool firstOfPair = interleaved ? i % 2 == 0 : i < r / 2;
      const int64_t partner = interleaved ? (firstOfPair ? i + 1 : i - 1)
                                          : (firstOfPair ? i + r / 2 : i - r / 2);
      const double c = getDouble(cos, tableRow * r + i), s = getDouble(sin, tableRow * r + i);
      const double xp = getDouble(x, row * f + partner);
      out.push_back(firstOfPair ? xi * c - xp * s : xi * c + xp * s);
    }
  }
  return out;
}

TEST(CpuRotaryTest, MatchesTheOpDefinition) {
  ThreadScope threads(2);
  Rng rng(61);
  struct Case {
    Shape input, table;
  };
  const Case cases[] = {
      {{2, 4, 10, 16}, {10, 16}},      // [B, H, S, D] with a [S, D] table
      {{2, 10, 4, 16}, {10, 1, 16}},   // [B, S, H, D]: table broadcast over heads
      {{2, 4, 10, 16}, {2, 1, 10, 8}}, // per-batch positions, partial rotation R < D
      {{3, 64}, {64}},                 // one table for every row
      {{500, 2, 32}, {500, 1, 32}},    // many rows: parallel
  };
  for (DType type : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const double tol = type == DType::F16 ? 4e-3 : type == DType::BF16 ? 3e-2 : 1e-6;
    for (const Case &c : cases) {
      for (bool interleaved : {false, true}) {
        HostTensor x = random(type, c.input, rng), cos = random(type, c.table, rng),
                   sin = random(type, c.table, rng);
        HostTensor out(type, c.input);
        ASSERT_TRUE(succeeded(rotary(x.view(), cos.view(), sin.view(), interleaved, out.view())));
        EXPECT_TRUE(closeTo(out, c.input, naiveRotary(x, cos, sin, interleaved), tol, tol))
            << dtypeName(type) << " " << formatShape(c.input) << " interleaved " << interleaved;
      }
    }
  }
}

TEST(CpuRotaryTest, IsTheRotateHalfFormThatRaisingRecognizes) {
  // x * cos + concat(-x[D/2:], x[:D/2]) * sin, with the usual duplicated
  // tables cos = [c, c]: the rotation by angle theta of each pair.
  const double theta = 0.3;
  HostTensor x = make(DType::F32, {1, 4}, {1, 2, 3, 4});
  HostTensor cos = make(DType::F32, {1, 4}, {std::cos(theta), std::cos(2 * theta),
                                             std::cos(theta), std::cos(2 * theta)});
  HostTensor sin = make(DType::F32, {1, 4}, {std::sin(theta), std::sin(2 * theta),
                                             std::sin(theta), std::sin(2 * theta)});
  HostTensor out(DType::F32, {1, 4});
  ASSERT_TRUE(succeeded(rotary(x.view(), cos.view(), sin.view(), false, out.view())));
  const std::vector<double> want = {
      1 * std::cos(theta) - 3 * std::sin(theta), 2 * std::cos(2 * theta) - 4 * std::sin(2 * theta),
      3 * std::cos(theta) + 1 * std::sin(theta), 4 * std::cos(2 * theta) + 2 * std::sin(2 * theta)};
  EXPECT_TRUE(closeTo(out, {1, 4}, want, 1e-6));
}

TEST(CpuRotaryTest, InPlace) {
  Rng rng(62);
  HostTensor x = random(DType::F32, {3, 5, 12}, rng), cos = random(DType::F32, {5, 8}, rng),
             sin = random(DType::F32, {5, 8}, rng);
  const std::vector<double> want = naiveRotary(x, cos, sin, true);
  ASSERT_TRUE(succeeded(rotary(x.view(), cos.view(), sin.view(), true, x.view())));
  EXPECT_TRUE(closeTo(x, {3, 5, 12}, want, 1e-6, 1e-7));
}

TEST(CpuRotaryTest, RejectsBadTables) {
  HostTensor x(DType::F32, {2, 3, 8}), out(DType::F32, {2, 3, 8});
  HostTensor odd(DType::F32, {3, 5}), wide(DType::F32, {3, 10}), ok(DType::F32, {3, 8}),
      other(DType::F32, {3, 6}), rows(DType::F32, {4, 8});
  EXPECT_TRUE(failsWith(rotary(x.view(), odd.view(), odd.view(), false, out.view()),
                        "rotary: rotated features must be even, non-zero and at most 8; got 5"));
  EXPECT_TRUE(failsWith(rotary(x.view(), wide.view(), wide.view(), false, out.view()),
                        "at most 8; got 10"));
  EXPECT_TRUE(failsWith(rotary(x.view(), ok.view(), other.view(), false, out.view()),
                        "cos and sin shapes differ"));
  EXPECT_TRUE(failsWith(rotary(x.view(), rows.view(), rows.view(), false, out.view()),
                        "cos does not broadcast to the input; expected [2, 3] but got [4]"));
}

} // namespace
} // namespace shardc::rt::cpu::test
