//===- TrainingPipelineRankTest.cpp - a training step cut into two stages ---===//
//
// The pipeline of TrainingPipeline.h written as an artifact of hand-built
// programs (pp=2, one rank per stage, run as threads), for the loss
// L = sum over micro-batches m of (w x_m)^2 and SGD with lr = 0.5:
//   stage 0 forward          y = x w, x kept for the backward
//   stage 1 forward          loss.sum += y^2, y kept
//   stage 1 backward_input   dy = 2 y, back to stage 0
//   stage 0 backward_input   g = dy x, to its backward_weight
//   stage 0 backward_weight  w.grad += g
//   stage 0 update level 0   w -= lr w.grad; n = sum(w.grad), to stage 1
//   stage 1 update level 0   loss = sum(loss.sum)
//   stage 1 update level 1   grad_norm = n
// A rank's programs share its states (w written by the update is read by
// the next step's forward) and each step sums the accumulators from zero.
// The ranks' program lists are checked like the plan: one line each.
//
//===----------------------------------------------------------------------===//
#include "runtime/session/PipelineRank.h"

#include "runtime/comm/InProcess.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/io/Checksum.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/TrainingPipeline.h"
#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

namespace shardc::rt {
namespace {

using nlohmann::json;
using schema::Storage;
using test::floats;
using test::floatValues;
using test::kTrainingMesh;

/// A float32 input [1] (position `index`), a state, an accumulator, arena.
test::BufferSpec input(uint32_t index, std::vector<int64_t> shape = {1}) {
  return {Storage::Input, std::move(shape), 0, nullptr, index};
}
test::BufferSpec state(const char *name) { return {Storage::State, {1}, 0, name}; }
test::BufferSpec accumulator(const char *name) {
  return {Storage::State, {1}, 0, name, 0, true, true};
}
test::BufferSpec arena(uint64_t offset, std::vector<int64_t> shape = {1}) {
  return {Storage::Arena, std::move(shape), offset};
}
/// reduce_sum's parameters for a [1] tensor summed into a scalar.
const std::vector<std::pair<const char *, std::vector<int64_t>>> kSumAll = {{"axes", {0}},
                                                                            {"keepdims", {0}}};

/// The eight programs, in the plan's order (TrainingPipeline.h).
std::vector<std::vector<uint8_t>> programs() {
  const MeshShape &mesh = kTrainingMesh;
  return {
      test::floatProgram({input(0), state("w"), arena(0), arena(64)},
                         {{"mul", {0, 1}, {2}}, {"copy", {0}, {3}}}, {{"y", 2}, {"saved_x", 3}},
                         mesh),
      test::floatProgram({input(0), input(1), arena(0)}, {{"mul", {0, 1}, {2}}}, {{"g", 2}}, mesh),
      test::floatProgram({input(0), accumulator("w.grad"), arena(0)},
                         {{"add", {1, 0}, {2}}, {"copy", {2}, {1}}}, {}, mesh),
      test::floatProgram({state("w"),
                          accumulator("w.grad"),
                          {Storage::Weight, {1}, 0, "lr"},
                          arena(0),
                          arena(64),
                          arena(128, {})},
                         {{"mul", {2, 1}, {3}},
                          {"sub", {0, 3}, {4}},
                          {"copy", {4}, {0}},
                          {"reduce_sum", {1}, {5}, kSumAll}},
                         {{"n", 5}}, mesh),
      test::floatProgram(
          {input(0), accumulator("loss.sum"), arena(0), arena(64), arena(128)},
          {{"mul", {0, 0}, {2}}, {"add", {1, 2}, {3}}, {"copy", {3}, {1}}, {"copy", {0}, {4}}},
          {{"saved_y", 4}}, mesh),
      test::floatProgram({input(0), arena(0)}, {{"add", {0, 0}, {1}}}, {{"dy", 1}}, mesh),
      test::floatProgram({accumulator("loss.sum"), arena(0, {})},
                         {{"reduce_sum", {0}, {1}, kSumAll}}, {{"loss", 1}}, mesh),
      test::floatProgram({input(0, {}), arena(0, {})}, {{"copy", {0}, {1}}}, {{"grad_norm", 1}},
                         mesh)};
}

class TrainingPipelineRankTest : public io::test::TempDir {
protected:
  /// Writes the artifact: a program file per program, a weight file per
  /// stage (stage 0's holds w = 3 and lr = 0.5), the manifest.
  void SetUp() override {
    TempDir::SetUp();
    artifact = path("art");
    std::filesystem::create_directory(artifact);
    json files = json::object();
    auto listed = [&](const std::string &name) {
      files[name] = {{"bytes", std::filesystem::file_size(artifact + "/" + name)},
                     {"crc32", *io::crc32File(artifact + "/" + name)}};
    };
    for (int stage = 0; stage < 2; ++stage) {
      std::vector<io::NamedTensor> tensors;
      if (stage == 0)
        tensors = {{"w", floats({1}, {3})}, {"lr", floats({1}, {0.5f})}};
      const std::string name = "stage" + std::to_string(stage) + ".safetensors";
      ASSERT_TRUE(io::writeSafeTensors(
                      artifact + "/" + name, tensors,
                      {{"mesh", kTrainingMesh.describe()}, {"ranks", std::to_string(stage)}})
                      .ok());
      listed(name);
    }
    const json section = test::trainingPipelineSection();
    const std::vector<std::vector<uint8_t>> bytes = programs();
    json ranks = {{{"rank", 0}, {"coords", {{"pp", 0}}}, {"stages", json::array()}},
                  {{"rank", 1}, {"coords", {{"pp", 1}}}, {"stages", json::array()}}};
    for (size_t i = 0; i < bytes.size(); ++i) {
      const json &program = section["programs"][i];
      const int stage = program["stage"];
      const std::string name = "program" + std::to_string(i);
      std::ofstream(artifact + "/" + name, std::ios::binary)
          .write(reinterpret_cast<const char *>(bytes[i].data()), std::streamsize(bytes[i].size()));
      listed(name);
      json entry = {{"stage", stage},
                    {"program", name},
                    {"weights", "stage" + std::to_string(stage) + ".safetensors"},
                    {"arena_bytes", 256}};
      for (const char *key : {"part", "level"})
        if (program.contains(key))
          entry[key] = program[key];
      ranks[stage]["stages"].push_back(entry);
    }
    auto signature = [](const std::vector<TensorSignature> &tensors) {
      json list = json::array();
      for (const TensorSignature &tensor : tensors)
        list.push_back(
            {{"name", tensor.name}, {"dtype", dtypeName(tensor.dtype)}, {"shape", tensor.shape}});
      return list;
    };
    manifest = {{"format", "shardc-artifact"},
                {"version", kArtifactVersion},
                {"target", "cpu"},
                {"inputs", signature(test::kTrainingInputs)},
                {"outputs", signature(test::kTrainingOutputs)},
                {"mesh", {{"axes", {{"pp", 2}}}}},
                {"ranks", ranks},
                {"files", files},
                {"training", test::trainingSection()},
                {"pipeline", section}};
    writeManifest();
  }

  void writeManifest() { std::ofstream(artifact + "/manifest.json") << manifest.dump(2); }

  std::string artifact;
  json manifest;
};

TEST_F(TrainingPipelineRankTest, StepsTrainTheSharedStates) {
  auto layout = readArtifactLayout(artifact);
  ASSERT_TRUE(layout.ok()) << layout.message();
  ASSERT_TRUE(layout->pipeline && layout->pipeline->training);
  const HostTensor x = floats({2}, {1, 2});
  // Per step: the output rank's loss and grad_norm, and w after it.
  std::vector<std::vector<HostTensor>> outputs(2);
  std::vector<std::vector<float>> w;
  std::vector<std::vector<TraceEvent>> traces(2);
  std::vector<std::string> states;
  comm::InProcessWorld world(2, std::chrono::seconds(20));
  Status status = world.run([&](int rank, Communicator &communicator) -> Status {
    auto loaded = loadStages(*layout, rank);
    if (!loaded)
      return loaded.status();
    cpu::CpuDevice device;
    auto pipeline = PipelineRank::prepare(*layout->pipeline, *loaded, device, communicator);
    if (!pipeline)
      return pipeline.status();
    for (int step = 0; step < 2; ++step) {
      std::vector<HostTensor> produced;
      if (Status run = (*pipeline)->run({&x}, OutputGather(), produced, false,
                                        step == 0 ? &traces[rank] : nullptr);
          !run)
        return run;
      if (rank == 1) {
        outputs[step] = std::move(produced);
        continue;
      }
      auto value = (*pipeline)->states().readState("w");
      if (!value)
        return value.status();
      w.push_back(floatValues(*value));
    }
    if (rank == 0)
      for (const StateTensor &tensor : (*pipeline)->states().states())
        states.push_back(tensor.name);
    return Status();
  });
  ASSERT_TRUE(status.ok()) << status.message();
  // Step 1 (w = 3): y = 3, 6; loss = 9 + 36; w.grad = 6*1 + 12*2 = 30; w = 3 - 15.
  // Step 2 (w = -12): y = -12, -24; loss = 144 + 576; w.grad = -24 - 96; w = -12 + 60.
  // Accumulators not zeroed between the steps would give w.grad = -90.
  ASSERT_EQ(outputs[0].size(), 2u);
  EXPECT_EQ(floatValues(outputs[0][0]), std::vector<float>{45});
  EXPECT_EQ(floatValues(outputs[0][1]), std::vector<float>{30});
  ASSERT_EQ(outputs[1].size(), 2u);
  EXPECT_EQ(floatValues(outputs[1][0]), std::vector<float>{720});
  EXPECT_EQ(floatValues(outputs[1][1]), std::vector<float>{-120});
  EXPECT_EQ(w, (std::vector<std::vector<float>>{{-12}, {48}}));
  // The model's one state; the accumulators are none.
  EXPECT_EQ(states, std::vector<std::string>{"w"});
  // One event per action, named by part.
  ASSERT_EQ(traces[0].size(), 12u);
  EXPECT_EQ(traces[0][6].name, "backward_weight stage 0, micro-batch 0");
  EXPECT_EQ(traces[0][10].name, "update stage 0 level 0");
  ASSERT_EQ(traces[1].size(), 11u);
  EXPECT_EQ(traces[1][2].name, "backward_input stage 1, micro-batch 0");
  EXPECT_EQ(traces[1][10].name, "update stage 1 level 1");
  EXPECT_EQ(traces[1][10].args.back(), (std::pair<std::string, int64_t>("level", 1)));
}

struct BrokenList {
  const char *what;
  std::function<void(json &ranks)> edit;
  const char *error;
};

class TrainingPipelineRankLists : public TrainingPipelineRankTest,
                                  public ::testing::WithParamInterface<BrokenList> {};

TEST_P(TrainingPipelineRankLists, NameTheManifestAndTheEntry) {
  GetParam().edit(manifest["ranks"]);
  writeManifest();
  auto layout = readArtifactLayout(artifact);
  ASSERT_FALSE(layout.ok()) << GetParam().what;
  EXPECT_EQ(layout.message(), artifact + "/manifest.json: " + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Entries, TrainingPipelineRankLists,
    ::testing::Values(
        BrokenList{"a program left out", [](json &r) { r[0]["stages"].erase(2); },
                   "ranks[0].stages: lists 3 program(s); pp 0 runs 4"},
        BrokenList{"another part", [](json &r) { r[0]["stages"][1]["part"] = "backward_weight"; },
                   "ranks[0].stages[1].part: 'backward_weight'; expected 'backward_input' (pp 0's "
                   "programs in order)"},
        BrokenList{"no level", [](json &r) { r[1]["stages"][3].erase("level"); },
                   "ranks[1].stages[3].level: none; expected 1 (pp 1's programs in order)"},
        BrokenList{"another stage's weights",
                   [](json &r) { r[1]["stages"][2]["weights"] = "stage0.safetensors"; },
                   "ranks[1].stages[2]: the file 'stage0.safetensors' holds weights of stage 0, "
                   "not of stage 1"},
        BrokenList{"a program file twice",
                   [](json &r) { r[0]["stages"][3]["program"] = "program0"; },
                   "ranks[0].stages[3]: the file 'program0' is named twice in the ranks' "
                   "stages"}));

} // namespace
} // namespace shardc::rt
