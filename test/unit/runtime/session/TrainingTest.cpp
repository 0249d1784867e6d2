//===- TrainingTest.cpp - training steps, checkpoints and resuming --------===//
//
// A hand-written training artifact of two data-parallel ranks that share one
// weight file: each step does w <- w - x and m <- m + x (m zero_init), with
// loss = sum(w) and grad_norm = sum(m) after the update. Its ranks run as
// threads; a checkpoint taken after some steps resumes, in a new session,
// exactly where the first left off.
//
//===----------------------------------------------------------------------===//
#include "runtime/session/Training.h"

#include "runtime/io/Checksum.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>

namespace shardc::rt {
namespace {

const MeshShape kMesh({"dp"}, {2});

/// Buffers: 0 input x [4], 1 state w, 2 state m (zero_init), 3-6 arena.
std::vector<uint8_t> program() {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> vector{4}, scalar{};
  auto buffer = [&](schema::Storage storage, const std::vector<int64_t> &shape, const char *name,
                    uint64_t offset = 0, bool zeroInit = false) {
    return schema::CreateBufferDirect(b, storage, schema::DType::F32, &shape, offset, name, 0,
                                      zeroInit);
  };
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers{
      buffer(schema::Storage::Input, vector, nullptr),
      buffer(schema::Storage::State, vector, "w"),
      buffer(schema::Storage::State, vector, "w.momentum_buffer", 0, true),
      buffer(schema::Storage::Arena, vector, nullptr, 0),
      buffer(schema::Storage::Arena, scalar, nullptr, 64),
      buffer(schema::Storage::Arena, vector, nullptr, 128),
      buffer(schema::Storage::Arena, scalar, nullptr, 192)};
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  const std::vector<int64_t> axes{0}, keepdims{0};
  auto step = [&](const char *kernel, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs,
                  bool sum = false) {
    std::vector<flatbuffers::Offset<schema::Param>> params;
    if (sum) {
      params.push_back(schema::CreateParamDirect(b, "axes", &axes));
      params.push_back(schema::CreateParamDirect(b, "keepdims", &keepdims));
    }
    steps.push_back(schema::CreateStepDirect(b, kernel, &inputs, &outputs, &params, "train"));
  };
  step("sub", {1, 0}, {3});
  step("copy", {3}, {1});
  step("reduce_sum", {1}, {4}, true);
  step("add", {2, 0}, {5});
  step("copy", {5}, {2});
  step("reduce_sum", {2}, {6}, true);
  std::vector<flatbuffers::Offset<schema::Output>> outputs{
      schema::CreateOutputDirect(b, "loss", 4), schema::CreateOutputDirect(b, "grad_norm", 6)};
  return test::finishProgram(b, 256, buffers, steps, outputs, kMesh);
}

std::vector<std::string> namesIn(const std::string &directory) {
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(directory))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

using test::floats;

class TrainingTest : public io::test::TempDir {
protected:
  void SetUp() override {
    TempDir::SetUp();
    artifact = path("art");
    std::filesystem::create_directory(artifact);
    ASSERT_TRUE(
        io::writeSafeTensors(artifact + "/rank0.safetensors",
                             std::vector<io::NamedTensor>{{"w", floats({4}, {10, 20, 30, 40})}},
                             {{"mesh", kMesh.describe()}, {"ranks", "0,1"}})
            .ok());
    const std::vector<uint8_t> bytes = program();
    nlohmann::json ranks = nlohmann::json::array(), files = nlohmann::json::object();
    for (int rank = 0; rank < 2; ++rank) {
      const std::string name = "rank" + std::to_string(rank) + ".program";
      std::ofstream(artifact + "/" + name, std::ios::binary)
          .write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
      ranks.push_back({{"rank", rank},
                       {"coords", {{"dp", rank}}},
                       {"program", name},
                       {"weights", "rank0.safetensors"}});
    }
    for (const char *name : {"rank0.program", "rank1.program", "rank0.safetensors"})
      files[name] = {{"bytes", std::filesystem::file_size(artifact + "/" + name)},
                     {"crc32", *io::crc32File(artifact + "/" + name)}};
    manifest = {
        {"format", "shardc-artifact"},
        {"version", kArtifactVersion},
        {"target", "cpu"},
        {"inputs", {{{"name", "x"}, {"dtype", "float32"}, {"shape", {4}}}}},
        {"outputs",
         {{{"name", "loss"}, {"dtype", "float32"}, {"shape", nlohmann::json::array()}},
          {{"name", "grad_norm"}, {"dtype", "float32"}, {"shape", nlohmann::json::array()}}}},
        {"mesh", {{"axes", {{"dp", 2}}}}},
        {"ranks", ranks},
        {"files", files},
        {"training",
         {{"loss", "loss"},
          {"grad_norm", "grad_norm"},
          {"optimizer", {{"name", "sgd"}}},
          {"batch_inputs", {"x"}}}}};
    writeManifest();
  }

  void writeManifest() { std::ofstream(artifact + "/manifest.json") << manifest.dump(2); }

  /// A session of the artifact with both ranks loaded, and a training on it.
  void open(std::unique_ptr<Session> &session, std::unique_ptr<Training> &training) {
    auto opened = Session::open(artifact);
    ASSERT_TRUE(opened.ok()) << opened.message();
    session = std::make_unique<Session>(std::move(*opened));
    ASSERT_TRUE(session->loadRanks(0, 2).ok());
    auto prepared = Training::prepare(*session, std::chrono::seconds(20));
    ASSERT_TRUE(prepared.ok()) << prepared.message();
    training = std::move(*prepared);
  }

  StepLoss step(Training &training, float value) {
    const HostTensor x = floats({4}, {value, value, value, value});
    auto loss = training.step({&x});
    EXPECT_TRUE(loss.ok()) << loss.message();
    return loss.ok() ? *loss : StepLoss{};
  }

  std::string artifact;
  nlohmann::json manifest;
};

TEST_F(TrainingTest, StepsSaveAndResumeWhereTheyLeftOff) {
  std::unique_ptr<Session> session;
  std::unique_ptr<Training> training;
  open(session, training);
  for (float value : {1.0f, 2.0f}) {
    const StepLoss loss = step(*training, value);
    EXPECT_EQ(loss.gradNorm, value == 1 ? 4 : 12);
  }
  EXPECT_EQ(training->steps(), 2);
  ASSERT_TRUE(training->save(path("ck")).ok());
  EXPECT_EQ(namesIn(path("ck")), (std::vector<std::string>{"checkpoint.json", "rank0.safetensors",
                                                           "rank1.safetensors"}));
  const StepLoss third = step(*training, 0.25f);
  EXPECT_EQ(third.loss, 100 - 4 * 3.25f);

  std::unique_ptr<Session> again;
  std::unique_ptr<Training> resumed;
  open(again, resumed);
  auto checkpoint = readCheckpoint(path("ck"), again->layout());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.message();
  EXPECT_EQ(checkpoint->step, 2);
  ASSERT_TRUE(resumed->resume(*checkpoint).ok());
  EXPECT_EQ(resumed->steps(), 2);
  const StepLoss same = step(*resumed, 0.25f);
  EXPECT_EQ(std::memcmp(&same, &third, sizeof(StepLoss)), 0);
  // A save replaces the checkpoint it resumed from.
  ASSERT_TRUE(resumed->save(path("ck")).ok());
  EXPECT_EQ(readCheckpoint(path("ck"), again->layout())->step, 3);
}

TEST_F(TrainingTest, ASaveReplacesOnlyACheckpointHoldingNothingElse) {
  std::unique_ptr<Session> session;
  std::unique_ptr<Training> training;
  open(session, training);
  ASSERT_TRUE(training->save(path("ck")).ok());
  io::test::writeFile(path("ck/notes.txt"), "mine");
  EXPECT_EQ(
      training->save(path("ck")).message(),
      "'" + path("ck") +
          "' holds 'notes.txt', which is not a file of the checkpoint; refusing to replace it");
  std::filesystem::create_directory(path("other"));
  EXPECT_EQ(training->save(path("other")).message(),
            "'" + path("other") +
                "' exists and is not a shardc checkpoint (no checkpoint.json); refusing to "
                "replace it");
  EXPECT_EQ(listing(), (std::vector<std::string>{"art", "ck", "other"}));
  EXPECT_TRUE(std::filesystem::exists(path("ck/notes.txt")));
  // Nothing failed that touched the states: the training goes on.
  EXPECT_EQ(step(*training, 1).gradNorm, 4);
}

TEST_F(TrainingTest, ACheckpointResumesOnlyItsOwnKindOfArtifact) {
  std::unique_ptr<Session> session;
  std::unique_ptr<Training> training;
  open(session, training);
  step(*training, 1);
  ASSERT_TRUE(training->save(path("ck")).ok());
  manifest["training"]["optimizer"]["name"] = "adamw";
  writeManifest();
  auto other = Session::open(artifact);
  ASSERT_TRUE(other.ok()) << other.message();
  EXPECT_EQ(readCheckpoint(path("ck"), other->layout()).message(),
            path("ck") + "/checkpoint.json: was saved for an artifact whose training differ from "
                         "this one's (another model, mesh or training setup)");
  EXPECT_EQ(readCheckpoint(path("art"), other->layout()).message(),
            path("art") + "/checkpoint.json: is missing; '" + path("art") +
                "' is not a shardc checkpoint");
  // A rank file changed after the save fails its CRC-32, before any state is touched.
  auto checkpoint = readCheckpoint(path("ck"), session->layout());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.message();
  std::string bytes = io::test::readFile(path("ck/rank1.safetensors"));
  bytes[bytes.size() - 1] ^= 1;
  io::test::writeFile(path("ck/rank1.safetensors"), bytes);
  Status status = training->resume(*checkpoint);
  EXPECT_NE(status.message().find("rank1.safetensors: checksum mismatch"), std::string::npos)
      << status.message();
  EXPECT_EQ(step(*training, 1).gradNorm, 8);
}

TEST_F(TrainingTest, AnInferenceArtifactDoesNotTrain) {
  manifest.erase("training");
  writeManifest();
  auto session = Session::open(artifact);
  ASSERT_TRUE(session.ok()) << session.message();
  ASSERT_TRUE(session->loadRanks(0, 2).ok());
  EXPECT_EQ(Training::prepare(*session, std::chrono::seconds(20)).message(),
            artifact + ": is not a training artifact (its manifest has no \"training\"; compile "
                       "it with shardc --train)");
}

} // namespace
} // namespace shardc::rt
