//===- MoeTest.cpp - moe_dispatch -> moe_experts -> moe_combine -----------===//
//
// The three kernels against a plain reference: per token and slot, the keep
// rule of docs/experts.md written out literally over the global (token,
// slot) order, and the expert's MLP computed in double straight from the
// stacked weights. They run with no group (P = 1) and on 2 and 4 in-process
// rank threads, exchanging tokens (each member holds a slice of them) or not
// (each holds all; the members' partial sums must add up to the reference).
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/kernels/Moe.h"
#include "test/unit/runtime/ElementValues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace shardc::rt::test {
namespace {

using namespace std::chrono_literals;

struct Case {
  int members = 1;
  bool exchange = true;
  bool gated = true;
  bool transposed = false;
  int64_t capacity = 0;
  std::string activation = "silu";
  DType dtype = DType::F32;
  int64_t experts = 8, slots = 2, hidden = 8, ffn = 12;
  int64_t tokens = 24; ///< over the whole group
};

std::string describe(const Case &c) {
  return std::to_string(c.members) + " members, exchange " + std::to_string(c.exchange) +
         ", gated " + std::to_string(c.gated) + ", transposed " + std::to_string(c.transposed) +
         ", capacity " + std::to_string(c.capacity) + ", " + c.activation + ", " +
         dtypeName(c.dtype);
}

/// The layer's global operands, as doubles.
struct Layer {
  std::vector<double> x, gates, wGate, wUp, wDown; // x [T, H], gates [T, k], weights [E, ...]
  std::vector<int64_t> indices;                    // [T, k]
};

Layer makeLayer(const Case &c) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> value(-1, 1);
  auto fill = [&](int64_t count) {
    std::vector<double> v(count);
    for (double &e : v)
      e = value(rng);
    return v;
  };
  Layer layer;
  layer.x = fill(c.tokens * c.hidden);
  layer.gates = fill(c.tokens * c.slots);
  layer.wGate = fill(c.experts * c.hidden * c.ffn);
  layer.wUp = fill(c.experts * c.hidden * c.ffn);
  layer.wDown = fill(c.experts * c.ffn * c.hidden);
  // Distinct experts per token, skewed towards the low ones so that a small
  // capacity drops entries of some experts and not of others.
  std::uniform_int_distribution<int64_t> anyExpert(0, c.experts - 1), lowExpert(0, 2);
  for (int64_t t = 0; t < c.tokens; ++t) {
    std::vector<int64_t> chosen;
    while (int64_t(chosen.size()) < c.slots) {
      int64_t e = rng() % 2 ? lowExpert(rng) : anyExpert(rng);
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end())
        chosen.push_back(e);
    }
    layer.indices.insert(layer.indices.end(), chosen.begin(), chosen.end());
  }
  return layer;
}

double activate(const std::string &name, double x) {
  if (name == "silu")
    return x / (1 + std::exp(-x));
  if (name == "gelu")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (name == "gelu_tanh")
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  return x > 0 ? x : 0; // relu
}

/// Weight [E, a, b] stored as [E, in, out], or [E, out, in] when transposed.
double weight(const Case &c, const std::vector<double> &w, int64_t e, int64_t in, int64_t out,
              int64_t inSize, int64_t outSize) {
  return c.transposed ? w[(e * outSize + out) * inSize + in] : w[(e * inSize + in) * outSize + out];
}

std::vector<double> expertMlp(const Case &c, const Layer &layer, int64_t e, const double *x) {
  std::vector<double> hidden(c.ffn), y(c.hidden, 0.0);
  for (int64_t f = 0; f < c.ffn; ++f) {
    double up = 0, gate = 0;
    for (int64_t h = 0; h < c.hidden; ++h) {
      up += x[h] * weight(c, layer.wUp, e, h, f, c.hidden, c.ffn);
      gate += x[h] * weight(c, layer.wGate, e, h, f, c.hidden, c.ffn);
    }
    hidden[f] = c.gated ? activate(c.activation, gate) * up : activate(c.activation, up);
  }
  for (int64_t h = 0; h < c.hidden; ++h)
    for (int64_t f = 0; f < c.ffn; ++f)
      y[h] += hidden[f] * weight(c, layer.wDown, e, f, h, c.ffn, c.hidden);
  return y;
}

/// y [T, H] by the doc's formula, and how many entries the keep rule drops.
std::vector<double> reference(const Case &c, const Layer &layer, int64_t &dropped) {
  std::vector<double> y(c.tokens * c.hidden, 0.0);
  std::vector<int64_t> ranked(c.experts, 0); // entries of each expert seen so far
  dropped = 0;
  for (int64_t t = 0; t < c.tokens; ++t)
    for (int64_t j = 0; j < c.slots; ++j) {
      const int64_t e = layer.indices[t * c.slots + j];
      const bool kept = c.capacity == 0 || ranked[e] < c.capacity;
      ++ranked[e];
      if (!kept) {
        ++dropped;
        continue;
      }
      std::vector<double> out = expertMlp(c, layer, e, &layer.x[t * c.hidden]);
      for (int64_t h = 0; h < c.hidden; ++h)
        y[t * c.hidden + h] += layer.gates[t * c.slots + j] * out[h];
    }
  return y;
}

HostTensor tensorOf(DType dtype, Shape shape, const double *values) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    setElementValue(t, i, values[i]);
  return t;
}

Param ints(int64_t value) { return Param{{value}, {}, {}}; }

/// One member's run of the three kernels: its tokens [first, first + count)
/// and experts' weights in, its y out.
Status runMember(const Case &c, const Layer &layer, Communicator *group, int member,
                 std::vector<double> &y) {
  const int64_t local = c.experts / c.members;
  const int64_t first = c.exchange ? member * (c.tokens / c.members) : 0;
  const int64_t count = c.exchange ? c.tokens / c.members : c.tokens;
  const int64_t sources = c.exchange ? c.members : 1;
  int64_t rowCount = sources * count * std::min(c.slots, local);
  if (c.capacity > 0)
    rowCount = std::min(rowCount, local * c.capacity);

  Params params;
  params.set("experts", ints(c.experts));
  params.set("exchange", ints(c.exchange));
  params.set("capacity", ints(c.capacity));
  params.set("gated", ints(c.gated));
  params.set("transpose_weights", ints(c.transposed));
  params.set("activation", Param{{}, {}, {c.activation}});

  HostTensor x = tensorOf(c.dtype, {count, c.hidden}, &layer.x[first * c.hidden]);
  HostTensor indices(DType::I64, {count, c.slots});
  std::copy_n(&layer.indices[first * c.slots], count * c.slots,
              reinterpret_cast<int64_t *>(indices.bytes.data()));
  HostTensor gates = tensorOf(c.dtype, {count, c.slots}, &layer.gates[first * c.slots]);
  const Shape intoFfn =
      c.transposed ? Shape{local, c.ffn, c.hidden} : Shape{local, c.hidden, c.ffn};
  const Shape fromFfn =
      c.transposed ? Shape{local, c.hidden, c.ffn} : Shape{local, c.ffn, c.hidden};
  const int64_t block = local * c.hidden * c.ffn; // one member's experts
  HostTensor wGate = tensorOf(c.dtype, intoFfn, &layer.wGate[member * block]);
  HostTensor wUp = tensorOf(c.dtype, intoFfn, &layer.wUp[member * block]);
  HostTensor wDown = tensorOf(c.dtype, fromFfn, &layer.wDown[member * block]);

  HostTensor rows(c.dtype, {rowCount, c.hidden}), routing(DType::I64, {sources, c.experts});
  HostTensor out(c.dtype, {rowCount, c.hidden}), result(c.dtype, {count, c.hidden});
  auto run = [&](const char *name, std::vector<TensorView> inputs,
                 std::vector<TensorView> outputs) {
    return cpu::kernelTable().find(name)(KernelCall{inputs, outputs, params, group});
  };
  if (Status status =
          run("moe_dispatch", {x.view(), indices.view()}, {rows.view(), routing.view()});
      !status)
    return status;
  std::vector<TensorView> expertInputs{rows.view(), routing.view()};
  if (c.gated)
    expertInputs.push_back(wGate.view());
  expertInputs.push_back(wUp.view());
  expertInputs.push_back(wDown.view());
  if (Status status = run("moe_experts", expertInputs, {out.view()}); !status)
    return status;
  if (Status status = run("moe_combine", {out.view(), routing.view(), indices.view(), gates.view()},
                          {result.view()});
      !status)
    return status;
  y.assign(c.tokens * c.hidden, 0.0);
  for (int64_t i = 0; i < result.numel(); ++i)
    y[first * c.hidden + i] = elementValue(result, i);
  return {};
}

/// The group's y (the members' slices with exchange, the sum of their
/// partial sums without) against the reference; returns the dropped count.
int64_t checkCase(const Case &c, double tolerance = 1e-5) {
  SCOPED_TRACE(describe(c));
  const Layer layer = makeLayer(c);
  int64_t dropped = 0;
  const std::vector<double> want = reference(c, layer, dropped);
  std::vector<double> got(want.size(), 0.0);
  std::mutex mutex;
  auto member = [&](int rank, Communicator *group) -> Status {
    std::vector<double> mine;
    if (Status status = runMember(c, layer, group, rank, mine); !status)
      return status;
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t i = 0; i < got.size(); ++i)
      got[i] += mine[i];
    return {};
  };
  Status status =
      c.members == 1 ? member(0, nullptr)
                     : comm::InProcessWorld(c.members, 60s).run([&](int rank, Communicator &world) {
                         return member(rank, &world);
                       });
  EXPECT_TRUE(status.ok()) << status.message();
  double largest = 0, worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, std::fabs(want[i]));
    worst = std::max(worst, std::fabs(got[i] - want[i]));
  }
  EXPECT_GT(largest, 0.0);
  EXPECT_LE(worst, tolerance * largest) << "largest |y| " << largest;
  return dropped;
}

class MoeLayer : public ::testing::TestWithParam<int> {};

TEST_P(MoeLayer, DroplessMatchesTheReference) {
  for (bool exchange : {true, false})
    for (bool gated : {true, false})
      for (bool transposed : {false, true}) {
        Case c;
        c.members = GetParam();
        c.exchange = exchange;
        c.gated = gated;
        c.transposed = transposed;
        EXPECT_EQ(checkCase(c), 0);
      }
}

TEST_P(MoeLayer, ACapacityDropsTheSameEntriesAsTheReference) {
  for (bool exchange : {true, false}) {
    Case c;
    c.members = GetParam();
    c.exchange = exchange;
    c.capacity = 5; // the low experts get about 12 entries each of 48
    EXPECT_GT(checkCase(c), 0);
  }
}

TEST_P(MoeLayer, EveryActivation) {
  for (const char *activation : {"silu", "gelu", "gelu_tanh", "relu"}) {
    Case c;
    c.members = GetParam();
    c.activation = activation;
    c.gated = std::string(activation) != "relu";
    checkCase(c);
  }
}

TEST_P(MoeLayer, HalfStorageComputesInFloat) {
  for (DType dtype : {DType::F16, DType::BF16}) {
    Case c;
    c.members = GetParam();
    c.dtype = dtype;
    c.capacity = 6;
    // The tolerance of the rounded operands and intermediates.
    checkCase(c, dtype == DType::F16 ? 1e-2 : 5e-2);
  }
}

INSTANTIATE_TEST_SUITE_P(Members, MoeLayer, ::testing::Values(1, 2, 4),
                         [](const auto &info) { return std::to_string(info.param) + "Members"; });

/// moe_dispatch alone on one member, for its errors.
Status dispatchAlone(std::vector<int64_t> indexValues, int64_t rowCount, int64_t experts = 4,
                     int64_t capacity = 0, StepCounters *counters = nullptr) {
  const int64_t tokens = int64_t(indexValues.size()) / 2;
  Params params;
  params.set("experts", ints(experts));
  params.set("capacity", ints(capacity));
  HostTensor x(DType::F32, {tokens, 2}), indices(DType::I64, {tokens, 2});
  std::copy(indexValues.begin(), indexValues.end(),
            reinterpret_cast<int64_t *>(indices.bytes.data()));
  HostTensor rows(DType::F32, {rowCount, 2}), routing(DType::I64, {1, experts});
  std::vector<TensorView> inputs{x.view(), indices.view()}, outputs{rows.view(), routing.view()};
  return cpu::kernelTable().find("moe_dispatch")(
      KernelCall{inputs, outputs, params, nullptr, nullptr, nullptr, counters});
}

TEST(MoeKernels, DispatchCountsTheLoadPerExpertForAProfile) {
  StepCounters counters;
  // Expert 0 gets 3 entries, of which capacity 2 keeps the first two.
  ASSERT_TRUE(dispatchAlone({0, 1, 0, 2, 0, 3}, 6, 4, 2, &counters).ok());
  const StepCounters want{
      {"kept_e0", 2}, {"kept_e1", 1}, {"kept_e2", 1}, {"kept_e3", 1}, {"dropped", 1},
      {"sent_rows", 0}};
  EXPECT_EQ(counters, want);
}

TEST(MoeKernels, TheLoadCountsTheRowsSentToOtherMembers) {
  // Member 1 of 2 owns experts 2 and 3; its own kept entries are row 1.
  kernels::MoeGroup group;
  group.experts = 4;
  group.exchange = true;
  group.members = 2;
  group.member = 1;
  const int64_t count[] = {1, 2, 3, 4, 5, 6, 7, 8}, kept[] = {1, 2, 3, 4, 5, 6, 7, 8};
  StepCounters counters;
  kernels::moeLoad(group, count, kept, counters);
  ASSERT_FALSE(counters.empty());
  EXPECT_EQ(counters.back(), (std::pair<std::string, int64_t>{"sent_rows", 5 + 6}));
}

TEST(MoeKernels, ErrorsNameTheProblem) {
  EXPECT_TRUE(dispatchAlone({0, 1, 2, 3}, 4).ok());
  EXPECT_EQ(dispatchAlone({0, 1, 2, 4}, 4).message(),
            "moe_dispatch: indices[1, 1] is expert 4, outside [0, 4)");
  EXPECT_EQ(dispatchAlone({0, -1, 2, 3}, 4).message(),
            "moe_dispatch: indices[0, 1] is expert -1, outside [0, 4)");
  EXPECT_EQ(dispatchAlone({0, 1, 2, 2}, 4).message(),
            "moe_dispatch: token 1 names expert 2 in slots 0 and 1");
  EXPECT_EQ(dispatchAlone({0, 1, 2, 3}, 3).message(),
            "moe_dispatch: rows has 3 rows, fewer than the 4 the worst case needs");
  EXPECT_EQ(dispatchAlone({0, 1, 2, 3}, 4, 0).message(),
            "moe_dispatch: experts must be at least 1 but got 0");
}

} // namespace
} // namespace shardc::rt::test
