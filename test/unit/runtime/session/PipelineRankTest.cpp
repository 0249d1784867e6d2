//===- PipelineRankTest.cpp - the action interpreter on rank threads --------===//
//
// A (pp=2, tp=2) pipeline of two tiny stage programs run on four rank
// threads: stage 0 doubles its micro-batch (no collective), stage 1 sums
// the transfer over tp. Only stage 1 has a collective, so ranks that split
// groups in program order would deadlock (pp 0 never splits); the shared
// groups make it run. A rank that fails makes its peers fail, not hang.
//
//===----------------------------------------------------------------------===//
#include "runtime/session/PipelineRank.h"
#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/session/Iota.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace shardc::rt {
namespace {

using comm::InProcessWorld;

const MeshShape kMesh({"pp", "tp"}, {2, 2});

/// A program of one step `kernel` from Input 0 [1, 4] to an arena buffer
/// [1, 4], given as output `output`; `axes` for a collective.
std::vector<uint8_t> program(const char *kernel, const char *output,
                             const std::vector<std::string> &axes,
                             const MeshShape &meshShape = kMesh) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<int64_t> shape{1, 4};
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers = {
      schema::CreateBufferDirect(b, schema::Storage::Input, schema::DType::F32, &shape, 0, nullptr,
                                 0),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &shape, 0, nullptr,
                                 0)};
  std::vector<flatbuffers::Offset<schema::Param>> params;
  if (!axes.empty())
    params.push_back(test::meshAxesParam(b, axes));
  std::vector<uint32_t> in = axes.empty() ? std::vector<uint32_t>{0, 0} : std::vector<uint32_t>{0};
  std::vector<uint32_t> out{1};
  std::vector<flatbuffers::Offset<schema::Step>> steps = {
      schema::CreateStepDirect(b, kernel, &in, &out, &params, "x")};
  std::vector<flatbuffers::Offset<schema::Output>> outputs = {
      schema::CreateOutputDirect(b, output, 1)};
  return test::finishProgram(b, 64, buffers, steps, outputs, meshShape);
}

/// Two stages on `mesh`: x [2, 4] cut into two micro-batches, h the
/// transfer, y the output; `actions` per pp rank.
StatusOr<PipelinePlan> twoStages(const MeshShape &mesh, int virtualStages, const char *schedule,
                                 nlohmann::json actions, int outputRank) {
  auto manifest = nlohmann::json::parse(R"({"pipeline": {
    "stages": 2, "microbatches": 2,
    "inputs": [{"name": "x", "microbatch_dim": 0}],
    "outputs": [{"name": "y", "microbatch_dim": 0}],
    "transfers": [{"id": 0, "from": 0, "to": 1, "dtype": "float32", "shape": [1, 4]}],
    "programs": [
      {"stage": 0, "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 4]}],
       "outputs": [{"name": "h", "dtype": "float32", "shape": [1, 4], "transfer": 0}]},
      {"stage": 1, "inputs": [{"name": "h", "dtype": "float32", "shape": [1, 4], "transfer": 0}],
       "outputs": [{"name": "y", "dtype": "float32", "shape": [1, 4]}]}]}})");
  nlohmann::json &pipeline = manifest["pipeline"];
  pipeline["virtual_stages"] = virtualStages;
  pipeline["schedule"] = schedule;
  pipeline["actions"] = std::move(actions);
  pipeline["output_rank"] = outputRank;
  return parsePipelinePlan(manifest, mesh, {{"x", DType::F32, {2, 4}}}, {{"y", DType::F32, {2, 4}}},
                           "manifest.json");
}

/// An action of a pp rank's list: {"op": op, key: value, "microbatch": m}.
nlohmann::json action(const char *op, const char *key, int value, int microbatch) {
  return {{"op", op}, {key, value}, {"microbatch", microbatch}};
}

/// The two stages on kMesh under GPipe: pp 0 runs stage 0 and sends each
/// micro-batch, pp 1 receives it and runs stage 1.
PipelinePlan plan() {
  nlohmann::json first = nlohmann::json::array(), second = nlohmann::json::array();
  for (int m = 0; m < 2; ++m) {
    first.push_back(action("forward", "stage", 0, m));
    first.push_back(action("send", "transfer", 0, m));
    second.push_back(action("recv", "transfer", 0, m));
    second.push_back(action("forward", "stage", 1, m));
  }
  auto parsed = twoStages(kMesh, 1, "gpipe", nlohmann::json::array({first, second}), 2);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return *parsed;
}

Artifact stageOf(int rank, int stage, const std::vector<uint8_t> &bytes, const PipelinePlan &p,
                 const MeshShape &mesh = kMesh) {
  Artifact artifact;
  artifact.target = "cpu";
  artifact.ranks = static_cast<int>(mesh.devices());
  artifact.rank = rank;
  artifact.stage = stage;
  artifact.mesh = mesh;
  for (const StageTensor &input : p.programs[stage].inputs)
    artifact.inputs.push_back(input.tensor);
  for (const StageTensor &output : p.programs[stage].outputs)
    artifact.outputs.push_back(output.tensor);
  artifact.programBytes = bytes;
  artifact.program = schema::GetProgram(artifact.programBytes.data());
  return artifact;
}

/// Runs the pipeline with stage 0's program `first` on every pp 0 rank
/// (rank 0's replaced by `brokenFirst` when given); each rank's outputs
/// and trace land in `outputs` / `traces`.
Status runPipeline(const std::vector<uint8_t> &first, const std::vector<uint8_t> *brokenFirst,
                   std::vector<std::vector<HostTensor>> &outputs,
                   std::vector<std::vector<TraceEvent>> &traces) {
  const PipelinePlan p = plan();
  const std::vector<uint8_t> second = program("all_reduce", "y", {"tp"});
  const HostTensor x = iota({2, 4});
  outputs.assign(4, {});
  traces.assign(4, {});
  InProcessWorld world(4, std::chrono::seconds(20));
  return world.run([&](int rank, Communicator &communicator) -> Status {
    const int stage = rank / 2;
    const std::vector<uint8_t> &bytes =
        stage == 1 ? second : (rank == 0 && brokenFirst ? *brokenFirst : first);
    std::vector<Artifact> stages;
    stages.push_back(stageOf(rank, stage, bytes, p));
    cpu::CpuDevice device;
    auto pipeline = PipelineRank::prepare(p, stages, device, communicator);
    if (!pipeline)
      return pipeline.status();
    return (*pipeline)->run({&x}, OutputGather(), outputs[rank], false, &traces[rank]);
  });
}

TEST(PipelineRank, RunsTheActionListsAndJoinsTheMicrobatches) {
  std::vector<std::vector<HostTensor>> outputs;
  std::vector<std::vector<TraceEvent>> traces;
  Status status = runPipeline(program("add", "h", {}), nullptr, outputs, traces);
  ASSERT_TRUE(status.ok()) << status.message();
  // Only the output rank (pp 1, tp 0) holds the outputs: y = sum over tp of 2x = 4x.
  for (int rank : {0, 1, 3})
    EXPECT_TRUE(outputs[rank].empty()) << rank;
  ASSERT_EQ(outputs[2].size(), 1u);
  ASSERT_EQ(outputs[2][0].shape, (Shape{2, 4}));
  const auto *y = reinterpret_cast<const float *>(outputs[2][0].bytes.data());
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y[i], 4.0f * i) << i;
  // One event per action, in the list's order.
  for (int rank = 0; rank < 4; ++rank) {
    ASSERT_EQ(traces[rank].size(), 4u);
    EXPECT_EQ(traces[rank][0].name,
              rank < 2 ? "forward stage 0, micro-batch 0" : "recv transfer 0, micro-batch 0");
    EXPECT_EQ(traces[rank][3].name,
              rank < 2 ? "send transfer 0, micro-batch 1" : "forward stage 1, micro-batch 1");
  }
}

TEST(PipelineRank, AFailedRankFailsItsPeers) {
  std::vector<std::vector<HostTensor>> outputs;
  std::vector<std::vector<TraceEvent>> traces;
  const std::vector<uint8_t> broken = program("no_such_kernel", "h", {});
  Status status = runPipeline(program("add", "h", {}), &broken, outputs, traces);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("rank 0"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("no kernel 'no_such_kernel'"), std::string::npos)
      << status.message();
}

/// Virtual stages on one device (pp=1, two stages): stage k sits at k / pp
/// among the rank's executors, and a transfer between two stages of one
/// rank works both sent to itself and kept without a send/recv pair.
TEST(PipelineRank, RunsVirtualStagesOfOneRank) {
  const MeshShape mesh({"pp"}, {1});
  for (bool sendToSelf : {true, false}) {
    nlohmann::json actions = nlohmann::json::array();
    for (int m = 0; m < 2; ++m) {
      actions.push_back(action("forward", "stage", 0, m));
      if (sendToSelf) {
        actions.push_back(action("send", "transfer", 0, m));
        actions.push_back(action("recv", "transfer", 0, m));
      }
      actions.push_back(action("forward", "stage", 1, m));
    }
    auto p = twoStages(mesh, 2, "interleaved", nlohmann::json::array({actions}), 0);
    ASSERT_TRUE(p.ok()) << p.status().message();
    const HostTensor x = iota({2, 4});
    std::vector<HostTensor> outputs;
    InProcessWorld world(1, std::chrono::seconds(20));
    Status status = world.run([&](int rank, Communicator &communicator) -> Status {
      std::vector<Artifact> stages;
      stages.push_back(stageOf(rank, 0, program("add", "h", {}, mesh), *p, mesh));
      stages.push_back(stageOf(rank, 1, program("add", "y", {}, mesh), *p, mesh));
      cpu::CpuDevice device;
      auto pipeline = PipelineRank::prepare(*p, stages, device, communicator);
      if (!pipeline)
        return pipeline.status();
      return (*pipeline)->run({&x}, OutputGather(), outputs, false, nullptr);
    });
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(outputs.size(), 1u);
    const auto *y = reinterpret_cast<const float *>(outputs[0].bytes.data());
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(y[i], 4.0f * i) << i << (sendToSelf ? " (sent to itself)" : " (kept)");
  }
}

} // namespace
} // namespace shardc::rt
