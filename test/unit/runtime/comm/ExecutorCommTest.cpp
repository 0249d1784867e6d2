//===- ExecutorCommTest.cpp - collective steps bound and run by the executor ===//
//
// A 2x2 ["dp", "tp"] program whose collective steps name different mesh
// axes, prepared and run on four rank threads; and the CPU kernels (GEMMs
// included) called from several rank threads at once.
//
//===----------------------------------------------------------------------===//
#include "CollectiveChecks.h"

#include "runtime/comm/InProcess.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/MatMul.h"
#include "runtime/cpu/Threading.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/comm/WrappedGroup.h"

#include <atomic>
#include <random>
#include <thread>

namespace shardc::rt::test {
namespace {

using comm::InProcessWorld;

/// Builds a program: Input x [2, 4] f32; arena a, b, d [2, 4] and c [4, 4];
///   a = all_reduce(x) over `firstAxes`; b = all_reduce(x) over dp and tp;
///   c = all_gather(a, dim 0) over dp; d = add(a, b).
std::vector<uint8_t> buildProgram(const std::vector<std::string> &firstAxes) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers;
  auto buffer = [&](schema::Storage storage, std::vector<int64_t> shape, uint64_t offset) {
    buffers.push_back(
        schema::CreateBufferDirect(b, storage, schema::DType::F32, &shape, offset, nullptr, 0));
  };
  buffer(schema::Storage::Input, {2, 4}, 0);
  buffer(schema::Storage::Arena, {2, 4}, 0);
  buffer(schema::Storage::Arena, {2, 4}, 64);
  buffer(schema::Storage::Arena, {4, 4}, 128);
  buffer(schema::Storage::Arena, {2, 4}, 192);
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  auto step = [&](const char *kernel, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs,
                  const std::vector<std::string> &axes,
                  std::vector<std::pair<const char *, int64_t>> ints) {
    std::vector<flatbuffers::Offset<schema::Param>> params;
    if (!axes.empty())
      params.push_back(meshAxesParam(b, axes));
    for (auto &[key, value] : ints) {
      std::vector<int64_t> values{value};
      params.push_back(schema::CreateParamDirect(b, key, &values));
    }
    steps.push_back(schema::CreateStepDirect(b, kernel, &inputs, &outputs, &params, "x"));
  };
  step("all_reduce", {0}, {1}, firstAxes, {});
  step("all_reduce", {0}, {2}, {"dp", "tp"}, {});
  step("all_gather", {1}, {3}, {"dp"}, {{"dim", 0}});
  step("add", {1, 2}, {4}, {}, {});
  std::vector<flatbuffers::Offset<schema::Output>> outputs;
  for (uint32_t id : {1u, 2u, 3u, 4u})
    outputs.push_back(schema::CreateOutputDirect(b, ("out" + std::to_string(id)).c_str(), id));
  return finishProgram(b, 256, buffers, steps, outputs, MeshShape({"dp", "tp"}, {2, 2}));
}

Artifact artifactFor(int rank, const std::vector<uint8_t> &program) {
  Artifact artifact;
  artifact.target = "cpu";
  artifact.ranks = 4;
  artifact.rank = rank;
  artifact.mesh = MeshShape({"dp", "tp"}, {2, 2});
  artifact.inputs = {{"x", DType::F32, {2, 4}}};
  artifact.programBytes = program;
  artifact.program = schema::GetProgram(artifact.programBytes.data());
  return artifact;
}

HostTensor filledWith(const Shape &shape, float value) {
  HostTensor t(DType::F32, shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    reinterpret_cast<float *>(t.bytes.data())[i] = value;
  return t;
}

TEST(ExecutorCommTest, BindsOneGroupPerMeshAxesList) {
  const std::vector<uint8_t> program = buildProgram({"tp"});
  InProcessWorld world(4, std::chrono::seconds(30));
  std::vector<std::vector<HostTensor>> outputs(4);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    Artifact artifact = artifactFor(rank, program);
    cpu::CpuDevice device;
    auto executor = Executor::prepare(artifact, device, &comm);
    if (!executor)
      return executor.status();
    HostTensor x = filledWith({2, 4}, float(rank + 1));
    for (int run = 0; run < 2; ++run) // a second run reuses the groups
      if (Status s = (*executor)->run({&x}, outputs[rank]); !s)
        return s;
    return Status();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  for (int rank = 0; rank < 4; ++rank) {
    const int dp = rank / 2;
    const float tpSum = dp == 0 ? 1 + 2 : 3 + 4;
    ASSERT_EQ(outputs[rank].size(), 4u);
    EXPECT_TRUE(sameTensor(outputs[rank][0], filledWith({2, 4}, tpSum))) << rank;
    EXPECT_TRUE(sameTensor(outputs[rank][1], filledWith({2, 4}, 10))) << rank;
    HostTensor gathered(DType::F32, {4, 4});
    for (int64_t i = 0; i < 16; ++i)
      reinterpret_cast<float *>(gathered.bytes.data())[i] = i < 8 ? 3 : 7;
    EXPECT_TRUE(sameTensor(outputs[rank][2], gathered)) << rank;
    EXPECT_TRUE(sameTensor(outputs[rank][3], filledWith({2, 4}, tpSum + 10))) << rank;
  }
}

// Deferred work (NCCL's sends) is issued before the run waits for its stream.
TEST(ExecutorCommTest, FlushesEveryGroupAtTheEndOfARun) {
  const std::vector<uint8_t> program = buildProgram({"tp"});
  InProcessWorld world(4, std::chrono::seconds(30));
  std::atomic<int> flushes{0};
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    WrappedGroup counting(world.communicator(rank), flushes);
    Artifact artifact = artifactFor(rank, program);
    cpu::CpuDevice device;
    auto executor = Executor::prepare(artifact, device, &counting);
    if (!executor)
      return executor.status();
    HostTensor x = filledWith({2, 4}, 1);
    std::vector<HostTensor> outputs;
    for (int run = 0; run < 2; ++run)
      if (Status s = (*executor)->run({&x}, outputs); !s)
        return s;
    (void)comm;
    return Status();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(flushes.load(), 4 * 3 * 2); // ranks x groups (tp; dp, tp; dp) x runs
}

TEST(ExecutorCommTest, RefusesCollectivesWithoutACommunicator) {
  const std::vector<uint8_t> program = buildProgram({"tp"});
  Artifact artifact = artifactFor(0, program);
  cpu::CpuDevice device;
  auto executor = Executor::prepare(artifact, device);
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().message(),
            "step 0 (all_reduce for x) is a collective, and no communicator was given");
}

TEST(ExecutorCommTest, RefusesAnAxisOutsideTheMesh) {
  const std::vector<uint8_t> program = buildProgram({"pp"});
  InProcessWorld world(4, std::chrono::seconds(30));
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    Artifact artifact = artifactFor(rank, program);
    cpu::CpuDevice device;
    auto executor = Executor::prepare(artifact, device, &comm);
    return executor.status();
  });
  EXPECT_NE(status.message().find(
                "step 0 (all_reduce for x): mesh axis 'pp' is not in the mesh (dp=2, tp=2)"),
            std::string::npos)
      << status.message();
}

TEST(ExecutorCommTest, RefusesAWorldOfAnotherSize) {
  const std::vector<uint8_t> program = buildProgram({"tp"});
  Artifact artifact = artifactFor(0, program);
  InProcessWorld world(2);
  std::unique_ptr<Communicator> comm = world.communicator(0);
  cpu::CpuDevice device;
  auto executor = Executor::prepare(artifact, device, comm.get());
  EXPECT_EQ(executor.status().message(),
            "the communicator is rank 0 of 2; the program is rank 0 of 4");
}

TEST(ExecutorCommTest, GemmsFromSeveralRankThreadsAtOnce) {
  // oneDNN's GEMMs and the OpenMP kernels called from four
  // threads at once, as `shardrun --np 4` does, each with two threads of its
  // own: every result must match the one computed alone.
  const int saved = cpu::numThreads();
  cpu::setNumThreads(2);
  constexpr int kRanks = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<HostTensor> lhs, rhs, alone;
  for (int rank = 0; rank < kRanks; ++rank) {
    lhs.emplace_back(DType::F32, Shape{2, 96, 160 + rank});
    rhs.emplace_back(DType::F32, Shape{160 + rank, 224});
    for (HostTensor *t : {&lhs.back(), &rhs.back()})
      for (int64_t i = 0; i < t->numel(); ++i)
        reinterpret_cast<float *>(t->bytes.data())[i] = uniform(rng);
    alone.emplace_back(DType::F32, Shape{2, 96, 224});
    ASSERT_TRUE(succeeded(cpu::matmul(lhs[rank].view(), rhs[rank].view(), alone[rank].view())));
  }
  std::vector<int> mismatches(kRanks, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank)
    threads.emplace_back([&, rank] {
      for (int i = 0; i < 20; ++i) {
        HostTensor out(DType::F32, {2, 96, 224});
        if (!cpu::matmul(lhs[rank].view(), rhs[rank].view(), out.view()).ok()) {
          ++mismatches[rank];
          continue;
        }
        const float *got = reinterpret_cast<const float *>(out.bytes.data());
        const float *want = reinterpret_cast<const float *>(alone[rank].bytes.data());
        for (int64_t j = 0; j < out.numel(); ++j)
          if (std::abs(got[j] - want[j]) > 1e-4f * (1 + std::abs(want[j]))) {
            ++mismatches[rank];
            break;
          }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  cpu::setNumThreads(saved);
  EXPECT_EQ(mismatches, std::vector<int>(kRanks, 0));
}

} // namespace
} // namespace shardc::rt::test
