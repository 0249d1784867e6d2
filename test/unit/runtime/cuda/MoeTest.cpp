//===- MoeTest.cpp - moe_dispatch, moe_experts, moe_combine on a GPU ------===//
//
// The CUDA kernels against the CPU kernels on the same inputs (which
// test/unit/runtime/cpu/MoeTest.cpp checks against a reference):
//  - with no group (P = 1), one kernel at a time, the later kernels' routing
//    and rows made by the CPU's dispatch, so each kernel is judged alone;
//  - the whole layer on 2 and 4 in-process ranks sharing GPU 0, each in a
//    stream of its own (the staged all-gather and all-to-all-v of `shardrun
//    --np N` on one GPU), exchanging tokens or not, with and without drops:
//    every rank runs the CPU kernels, then the CUDA kernels, on its operands
//    and compares rows and routing exactly, the experts' rows and y to the
//    type's tolerance, and the profile counters.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/cuda/CudaBackend.h"

#include <algorithm>
#include <mutex>

namespace shardc::rt::cuda::test {
namespace {

using namespace std::chrono_literals;

struct Case {
  int members = 1;
  bool exchange = false;
  bool gated = true;
  bool transposed = false;
  int64_t capacity = 0;
  std::string activation = "silu";
  DType dtype = DType::F32;
  int64_t experts = 8, slots = 2, hidden = 24, ffn = 40;
  int64_t tokens = 32;   ///< per member with exchange, else of every member
  int64_t extraRows = 3; ///< rows beyond the worst case: must come out zero
};

std::string describe(const Case &c) {
  return std::to_string(c.members) + " members, exchange " + std::to_string(c.exchange) +
         ", gated " + std::to_string(c.gated) + ", transposed " + std::to_string(c.transposed) +
         ", capacity " + std::to_string(c.capacity) + ", " + c.activation + ", " +
         dtypeName(c.dtype);
}

Params paramsOf(const Case &c) {
  Params params;
  params.set("experts", ints({c.experts}));
  params.set("exchange", ints({c.exchange}));
  params.set("capacity", ints({c.capacity}));
  params.set("gated", ints({c.gated}));
  params.set("transpose_weights", ints({c.transposed}));
  params.set("activation", strings({c.activation}));
  return params;
}

int64_t localExperts(const Case &c) { return c.experts / c.members; }
int64_t sources(const Case &c) { return c.exchange ? c.members : 1; }

/// R: the worst case of docs/experts.md, plus extraRows.
int64_t rowCount(const Case &c) {
  int64_t rows = sources(c) * c.tokens * std::min(c.slots, localExperts(c));
  if (c.capacity > 0)
    rows = std::min(rows, localExperts(c) * c.capacity);
  return rows + c.extraRows;
}

/// One member's operands.
struct Member {
  HostTensor x, indices, gates, wGate, wUp, wDown;
};

/// Distinct experts per token, skewed towards the low ones so that a small
/// capacity drops entries of some experts and not of others.
HostTensor randomIndices(const Case &c, Rng &rng) {
  HostTensor indices(DType::I64, {c.tokens, c.slots});
  auto *index = reinterpret_cast<int64_t *>(indices.bytes.data());
  for (int64_t t = 0; t < c.tokens; ++t)
    for (int64_t j = 0; j < c.slots; ++j) {
      int64_t expert;
      do
        expert = int64_t(rng() % (rng() % 2 ? 3 : c.experts));
      while (std::find(index + t * c.slots, index + t * c.slots + j, expert) !=
             index + t * c.slots + j);
      index[t * c.slots + j] = expert;
    }
  return indices;
}

Member makeMember(const Case &c, uint64_t seed) {
  Rng rng(seed);
  const int64_t local = localExperts(c);
  const Shape intoFfn =
      c.transposed ? Shape{local, c.ffn, c.hidden} : Shape{local, c.hidden, c.ffn};
  const Shape fromFfn =
      c.transposed ? Shape{local, c.hidden, c.ffn} : Shape{local, c.ffn, c.hidden};
  Member m{random(c.dtype, {c.tokens, c.hidden}, rng),
           randomIndices(c, rng),
           random(c.dtype, {c.tokens, c.slots}, rng, 0, 1),
           random(c.dtype, intoFfn, rng),
           random(c.dtype, intoFfn, rng),
           random(c.dtype, fromFfn, rng)};
  return m;
}

std::vector<HostTensor> expertInputs(const Case &c, const Member &m, const HostTensor &rows,
                                     const HostTensor &routing) {
  std::vector<HostTensor> inputs{rows, routing};
  if (c.gated)
    inputs.push_back(m.wGate);
  inputs.push_back(m.wUp);
  inputs.push_back(m.wDown);
  return inputs;
}

// Half storage rounds the GEMMs' and the activation's results, and the two
// backends' GEMMs sum in different orders: a rounding apart may then grow
// through the down projection.
double expertsScale(DType dtype) { return dtype == DType::F32 ? 10 : 4; }

//===----------------------------------------------------------------------===//
// P = 1: each kernel alone
//===----------------------------------------------------------------------===//

/// The CPU dispatch of `m`: rows and routing for the later kernels.
std::vector<HostTensor> cpuDispatch(const Case &c, const Member &m) {
  return runOnCpu("moe_dispatch", {m.x, m.indices},
                  {{c.dtype, {rowCount(c), c.hidden}}, {DType::I64, {sources(c), c.experts}}},
                  paramsOf(c));
}

TEST(CudaMoe, DispatchMovesTheCpusRows) {
  SHARDC_REQUIRE_GPU();
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool exchange : {false, true})
      for (int64_t capacity : {0, 5}) {
        Case c;
        c.dtype = dtype;
        c.exchange = exchange;
        c.capacity = capacity;
        const Member m = makeMember(c, 1);
        expectSameAsCpu("moe_dispatch", {m.x, m.indices},
                        {{c.dtype, {rowCount(c), c.hidden}}, {DType::I64, {1, c.experts}}},
                        paramsOf(c), describe(c), /*exact=*/true);
      }
}

TEST(CudaMoe, DispatchOfAnOddRowWidth) {
  SHARDC_REQUIRE_GPU();
  Case c; // 7 halves a row: rows that start on 2-byte boundaries only
  c.hidden = 7;
  c.dtype = DType::F16;
  const Member m = makeMember(c, 2);
  expectSameAsCpu("moe_dispatch", {m.x, m.indices},
                  {{c.dtype, {rowCount(c), c.hidden}}, {DType::I64, {1, c.experts}}}, paramsOf(c),
                  describe(c), /*exact=*/true);
}

TEST(CudaMoe, ExpertsMatchTheCpu) {
  SHARDC_REQUIRE_GPU();
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (bool gated : {true, false})
      for (bool transposed : {false, true}) {
        Case c;
        c.dtype = dtype;
        c.gated = gated;
        c.transposed = transposed;
        c.capacity = gated ? 0 : 5;
        const Member m = makeMember(c, 3);
        const std::vector<HostTensor> dispatched = cpuDispatch(c, m);
        expectSameAsCpu("moe_experts", expertInputs(c, m, dispatched[0], dispatched[1]),
                        {{c.dtype, {rowCount(c), c.hidden}}}, paramsOf(c), describe(c), false,
                        expertsScale(dtype));
      }
}

TEST(CudaMoe, ExpertsOfEveryActivation) {
  SHARDC_REQUIRE_GPU();
  for (const char *activation : {"silu", "gelu", "gelu_tanh", "relu"}) {
    Case c;
    c.activation = activation;
    c.gated = std::string(activation) != "relu";
    const Member m = makeMember(c, 4);
    const std::vector<HostTensor> dispatched = cpuDispatch(c, m);
    expectSameAsCpu("moe_experts", expertInputs(c, m, dispatched[0], dispatched[1]),
                    {{c.dtype, {rowCount(c), c.hidden}}}, paramsOf(c), describe(c), false,
                    expertsScale(c.dtype));
  }
}

TEST(CudaMoe, CombineMatchesTheCpu) {
  SHARDC_REQUIRE_GPU();
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (int64_t capacity : {0, 5}) {
      Case c;
      c.dtype = dtype;
      c.capacity = capacity;
      const Member m = makeMember(c, 5);
      const std::vector<HostTensor> dispatched = cpuDispatch(c, m);
      Rng rng(6);
      const HostTensor out = random(c.dtype, {rowCount(c), c.hidden}, rng);
      expectSameAsCpu("moe_combine", {out, dispatched[1], m.indices, m.gates},
                      {{c.dtype, {c.tokens, c.hidden}}}, paramsOf(c), describe(c));
    }
}

//===----------------------------------------------------------------------===//
// P = 2, 4: the layer on in-process ranks
//===----------------------------------------------------------------------===//

/// What one rank's layer produced.
struct LayerResults {
  std::vector<HostTensor> tensors; ///< rows, routing, out, y
  StepCounters counters;
};

struct Step {
  const char *kernel;
  std::vector<int> inputs, outputs; ///< indices into the layer's tensors
};

/// The layer's tensors: 0 x, 1 indices, 2 gates, 3.. the weights, then
/// rows, routing, out, y.
std::vector<HostTensor> layerTensors(const Case &c, const Member &m) {
  std::vector<HostTensor> tensors{m.x, m.indices, m.gates, m.wGate, m.wUp, m.wDown};
  tensors.emplace_back(c.dtype, Shape{rowCount(c), c.hidden});
  tensors.emplace_back(DType::I64, Shape{sources(c), c.experts});
  tensors.emplace_back(c.dtype, Shape{rowCount(c), c.hidden});
  tensors.emplace_back(c.dtype, Shape{c.tokens, c.hidden});
  return tensors;
}

std::vector<Step> layerSteps(const Case &c) {
  std::vector<int> experts{6, 7};
  if (c.gated)
    experts.push_back(3);
  experts.push_back(4);
  experts.push_back(5);
  return {{"moe_dispatch", {0, 1}, {6, 7}},
          {"moe_experts", experts, {8}},
          {"moe_combine", {8, 7, 1, 2}, {9}}};
}

constexpr int kFirstResult = 6;

Status runLayerOnCpu(const Case &c, const Member &m, Communicator &group, LayerResults &results) {
  std::vector<HostTensor> tensors = layerTensors(c, m);
  const Params params = paramsOf(c);
  for (const Step &step : layerSteps(c)) {
    std::vector<TensorView> in, out;
    for (int i : step.inputs)
      in.push_back(tensors[i].view());
    for (int i : step.outputs)
      out.push_back(tensors[i].view());
    StepCounters *counters =
        std::string(step.kernel) == "moe_dispatch" ? &results.counters : nullptr;
    KernelCall call{in, out, params, &group, nullptr, nullptr, counters};
    if (Status status = cpu::kernelTable().find(step.kernel)(call); !status)
      return status;
  }
  results.tensors.assign(tensors.begin() + kFirstResult, tensors.end());
  return {};
}

Status runLayerOnGpu(const Case &c, const Member &m, Communicator &group, LayerResults &results) {
  auto stream = gpu().createStream();
  if (!stream)
    return stream.status();
  std::vector<HostTensor> tensors = layerTensors(c, m);
  std::vector<TensorView> onDevice;
  auto releaseAll = [&] {
    for (const TensorView &view : onDevice)
      gpu().release(view.data);
  };
  Status status;
  for (size_t i = 0; i < tensors.size(); ++i) {
    HostTensor &tensor = tensors[i];
    // Garbage in the results, so that a row the kernels leave unwritten shows.
    if (i >= size_t(kFirstResult))
      std::fill(tensor.bytes.begin(), tensor.bytes.end(), std::byte{0xab});
    auto memory = gpu().allocate(tensor.bytes.size());
    if (!memory) {
      status = memory.status();
      break;
    }
    onDevice.push_back({*memory, tensor.dtype, tensor.shape});
    status = gpu().copyToDevice(*memory, tensor.bytes.data(), tensor.bytes.size());
    if (!status)
      break;
  }
  const Params params = paramsOf(c);
  for (const Step &step : layerSteps(c)) {
    if (!status)
      break;
    std::vector<TensorView> in, out;
    for (int i : step.inputs)
      in.push_back(onDevice[i]);
    for (int i : step.outputs)
      out.push_back(onDevice[i]);
    StepCounters *counters =
        std::string(step.kernel) == "moe_dispatch" ? &results.counters : nullptr;
    KernelCall call{in, out, params, &group, nullptr, nullptr, counters};
    status = kernelTable().findCheck(step.kernel)(call);
    if (status)
      status = (*stream)->launch(kernelTable().find(step.kernel), call);
  }
  if (Status synchronized = (*stream)->synchronize(); status)
    status = synchronized;
  for (size_t i = kFirstResult; status && i < tensors.size(); ++i)
    status = gpu().copyToHost(tensors[i].bytes.data(), onDevice[i].data, tensors[i].bytes.size());
  releaseAll();
  results.tensors.assign(tensors.begin() + kFirstResult, tensors.end());
  return status;
}

/// Every rank runs the layer on both backends and compares.
void checkLayerOnRanks(const Case &c) {
  SCOPED_TRACE(describe(c));
  std::mutex mutex;
  std::vector<LayerResults> cpuResults(c.members), gpuResults(c.members);
  comm::InProcessWorld world(c.members, 120s);
  Status status = world.run([&](int rank, Communicator &group) {
    // Without exchange every member holds the same tokens.
    const Member m = makeMember(c, c.exchange ? 10 + rank : 10);
    // Each member has its own experts' weights.
    Member own = m;
    Rng rng(20 + rank);
    own.wGate = random(c.dtype, m.wGate.shape, rng);
    own.wUp = random(c.dtype, m.wUp.shape, rng);
    own.wDown = random(c.dtype, m.wDown.shape, rng);
    LayerResults onCpu, onGpu;
    if (Status ran = runLayerOnCpu(c, own, group, onCpu); !ran)
      return ran;
    if (Status ran = runLayerOnGpu(c, own, group, onGpu); !ran)
      return ran;
    std::lock_guard<std::mutex> lock(mutex);
    cpuResults[rank] = std::move(onCpu);
    gpuResults[rank] = std::move(onGpu);
    return Status();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  for (int rank = 0; rank < c.members; ++rank) {
    const std::string who = "rank " + std::to_string(rank) + " ";
    const LayerResults &want = cpuResults[rank], &got = gpuResults[rank];
    ASSERT_EQ(got.tensors.size(), 4u) << who;
    expectMatch(want.tensors[0], got.tensors[0], who + "rows", /*exact=*/true);
    expectMatch(want.tensors[1], got.tensors[1], who + "routing", /*exact=*/true);
    expectMatch(want.tensors[2], got.tensors[2], who + "experts' rows", false,
                expertsScale(c.dtype));
    // y sums the experts' rows: their differences carry over.
    expectMatch(want.tensors[3], got.tensors[3], who + "y", false, expertsScale(c.dtype));
    EXPECT_EQ(want.counters, got.counters) << who;
    EXPECT_FALSE(got.counters.empty()) << who;
  }
}

class CudaMoeRanks : public ::testing::TestWithParam<int> {};

TEST_P(CudaMoeRanks, ExchangingTokens) {
  SHARDC_REQUIRE_GPU();
  for (int64_t capacity : {0, 6}) {
    Case c;
    c.members = GetParam();
    c.exchange = true;
    c.capacity = capacity;
    checkLayerOnRanks(c);
  }
}

TEST_P(CudaMoeRanks, TokensOnEveryMember) {
  SHARDC_REQUIRE_GPU();
  for (int64_t capacity : {0, 6}) {
    Case c;
    c.members = GetParam();
    c.capacity = capacity;
    checkLayerOnRanks(c);
  }
}

TEST_P(CudaMoeRanks, HalfStorageUngatedTransposed) {
  SHARDC_REQUIRE_GPU();
  for (DType dtype : {DType::F16, DType::BF16}) {
    Case c;
    c.members = GetParam();
    c.exchange = true;
    c.dtype = dtype;
    c.gated = false;
    c.transposed = true;
    c.activation = "gelu";
    checkLayerOnRanks(c);
  }
}

INSTANTIATE_TEST_SUITE_P(Members, CudaMoeRanks, ::testing::Values(2, 4),
                         [](const auto &info) { return std::to_string(info.param) + "Members"; });

} // namespace
} // namespace shardc::rt::cuda::test
