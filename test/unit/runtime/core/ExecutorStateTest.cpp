//===- ExecutorStateTest.cpp - state buffers kept and written from run to run -===//
//
// A hand-built training step: w <- w - x (sub, then copy into the state)
// and count <- count + 1 (a zero_init state), run several times on the CPU;
// every executor has states of its own, and the checks refuse states the
// weight file does not hold and steps that write a weight.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Executor.h"
#include "runtime/core/ProgramChecks.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

namespace shardc::rt {
namespace {

using Buffers = std::vector<flatbuffers::Offset<schema::Buffer>>;

/// The step w <- w - x, count <- count + 1 on buffers 0 input x [4], 1 the
/// state w, 2 arena, 3 the state count (zero_init), 4 the weight one,
/// 5 arena, 6 the state w again (the copy's output: one memory with 1).
/// `edit` may change the buffers before the program is built.
std::vector<uint8_t>
program(const std::function<void(flatbuffers::FlatBufferBuilder &, Buffers &)> &edit = nullptr) {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> vector{4}, one{1};
  auto buffer = [&](schema::Storage storage, const std::vector<int64_t> &shape, const char *name,
                    uint64_t offset = 0, bool zeroInit = false) {
    return schema::CreateBufferDirect(b, storage, schema::DType::F32, &shape, offset, name, 0,
                                      zeroInit);
  };
  Buffers buffers{buffer(schema::Storage::Input, vector, nullptr),
                  buffer(schema::Storage::State, vector, "w"),
                  buffer(schema::Storage::Arena, vector, nullptr),
                  buffer(schema::Storage::State, one, "count", 0, true),
                  buffer(schema::Storage::Weight, one, "one"),
                  buffer(schema::Storage::Arena, one, nullptr, 64),
                  buffer(schema::Storage::State, vector, "w")};
  if (edit)
    edit(b, buffers);
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  auto step = [&](const char *kernel, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
    steps.push_back(schema::CreateStepDirect(b, kernel, &inputs, &outputs, nullptr, "update"));
  };
  step("sub", {1, 0}, {2});
  step("copy", {2}, {6});
  step("add", {3, 4}, {5});
  step("copy", {5}, {3});
  std::vector<flatbuffers::Offset<schema::Output>> outputs{
      schema::CreateOutputDirect(b, "w", 1), schema::CreateOutputDirect(b, "count", 3)};
  return test::finishProgram(b, 128, buffers, steps, outputs, MeshShape{});
}

using test::floats;

class ExecutorStateTest : public io::test::TempDir {
protected:
  /// The artifact of `bytes` with the weight file w = [10, 20, 30, 40], one = 1.
  Artifact artifact(std::vector<uint8_t> bytes) {
    const std::string file = path("weights.safetensors");
    EXPECT_TRUE(io::writeSafeTensors(
                    file, std::vector<io::NamedTensor>{{"w", floats({4}, {10, 20, 30, 40})},
                                                       {"one", floats({1}, {1})}})
                    .ok());
    auto weights = io::SafeTensorsFile::open(file);
    EXPECT_TRUE(weights.ok()) << weights.message();
    Artifact made;
    made.target = "cpu";
    made.inputs = {{"x", DType::F32, {4}}};
    made.outputs = {{"w", DType::F32, {4}}, {"count", DType::F32, {1}}};
    made.programBytes = std::move(bytes);
    made.program = schema::GetProgram(made.programBytes.data());
    made.weights = std::make_shared<const io::SafeTensorsFile>(std::move(*weights));
    return made;
  }

  Status check(const Artifact &made) {
    return checkProgram(*made.program, made.inputs, made.outputs, *made.weights, "p.program");
  }

  cpu::CpuDevice device;
  const HostTensor x = floats({4}, {1, 2, 3, 4});
};

TEST_F(ExecutorStateTest, StepsUpdateTheStatesFromRunToRun) {
  const Artifact made = artifact(program());
  ASSERT_TRUE(check(made).ok()) << check(made).message();
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  std::vector<HostTensor> outputs;
  for (int run = 1; run <= 3; ++run) {
    Status status = (*executor)->run({&x}, outputs);
    ASSERT_TRUE(status.ok()) << status.message();
    const float k = static_cast<float>(run);
    EXPECT_EQ(test::floatValues(outputs[0]),
              (std::vector<float>{10 - k, 20 - 2 * k, 30 - 3 * k, 40 - 4 * k}))
        << "run " << run;
    EXPECT_EQ(test::floatValues(outputs[1]), std::vector<float>{k}) << "run " << run;
  }
  // One state per name, whatever the buffers naming it; the file is untouched.
  ASSERT_EQ((*executor)->states().size(), 2u);
  EXPECT_EQ((*executor)->states()[0].name, "w");
  EXPECT_EQ((*executor)->states()[1].name, "count");
  EXPECT_EQ(
      std::memcmp(made.weights->find("w")->data, floats({4}, {10, 20, 30, 40}).bytes.data(), 16),
      0);
}

TEST_F(ExecutorStateTest, EveryExecutorStartsFromTheFile) {
  const Artifact made = artifact(program());
  auto first = Executor::prepare(made, device);
  ASSERT_TRUE(first.ok()) << first.message();
  std::vector<HostTensor> outputs;
  ASSERT_TRUE((*first)->run({&x}, outputs).ok());
  ASSERT_TRUE((*first)->run({&x}, outputs).ok());
  // A second executor of the same artifact (a data-parallel replica sharing
  // the weight file) has states of its own, fresh from the file.
  auto second = Executor::prepare(made, device);
  ASSERT_TRUE(second.ok()) << second.message();
  ASSERT_TRUE((*second)->run({&x}, outputs).ok());
  EXPECT_EQ(test::floatValues(outputs[0]), (std::vector<float>{9, 18, 27, 36}));
  EXPECT_EQ(test::floatValues(outputs[1]), std::vector<float>{1});
  ASSERT_TRUE((*first)->run({&x}, outputs).ok());
  EXPECT_EQ(test::floatValues(outputs[0]), (std::vector<float>{7, 14, 21, 28}));
  EXPECT_EQ(test::floatValues(outputs[1]), std::vector<float>{3});
}

TEST_F(ExecutorStateTest, StatesAreReadAndOverwrittenBetweenRuns) {
  const Artifact made = artifact(program());
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  std::vector<HostTensor> outputs;
  ASSERT_TRUE((*executor)->run({&x}, outputs).ok());
  auto w = (*executor)->readState("w");
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(test::floatValues(*w), (std::vector<float>{9, 18, 27, 36}));
  HostTensor zeros = floats({4}, {0, 0, 0, 0}), count = floats({1}, {41});
  ASSERT_TRUE((*executor)->writeState("w", zeros.view()).ok());
  ASSERT_TRUE((*executor)->writeState("count", count.view()).ok());
  ASSERT_TRUE((*executor)->run({&x}, outputs).ok());
  EXPECT_EQ(test::floatValues(outputs[0]), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(test::floatValues(outputs[1]), std::vector<float>{42});
  Status wrong = (*executor)->writeState("w", count.view());
  EXPECT_EQ(wrong.message(), "state 'w' is float32 [4]; the value given is float32 [1]");
  EXPECT_EQ((*executor)->readState("v").message(), "the program has no state 'v'");
}

TEST_F(ExecutorStateTest, ALinearReadsItsStateWeightAfreshEveryRun) {
  // y = x . W with W a state: were it packed once like a weight, the second
  // run would still use the first W.
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> shape{4, 4}, row{1, 4};
  Buffers buffers{
      schema::CreateBufferDirect(b, schema::Storage::Input, schema::DType::F32, &row, 0, nullptr),
      schema::CreateBufferDirect(b, schema::Storage::State, schema::DType::F32, &shape, 0, "W", 0,
                                 true),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &row, 0, nullptr)};
  std::vector<uint32_t> in{0, 1}, out{2};
  std::vector<flatbuffers::Offset<schema::Step>> steps{
      schema::CreateStepDirect(b, "linear", &in, &out, nullptr, "y")};
  std::vector<flatbuffers::Offset<schema::Output>> outputs{schema::CreateOutputDirect(b, "y", 2)};
  Artifact made = artifact(test::finishProgram(b, 64, buffers, steps, outputs, MeshShape{}));
  made.inputs = {{"x", DType::F32, {1, 4}}};
  made.outputs = {{"y", DType::F32, {1, 4}}};
  ASSERT_TRUE(check(made).ok()) << check(made).message();
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  const HostTensor row4 = floats({1, 4}, {1, 2, 3, 4});
  std::vector<HostTensor> outputs1;
  for (float scale : {1.0f, 2.0f}) {
    std::vector<float> identity(16, 0.0f);
    for (int i = 0; i < 4; ++i)
      identity[static_cast<size_t>(i * 5)] = scale;
    HostTensor weight = floats({4, 4}, identity);
    ASSERT_TRUE((*executor)->writeState("W", weight.view()).ok());
    ASSERT_TRUE((*executor)->run({&row4}, outputs1).ok());
    EXPECT_EQ(test::floatValues(outputs1[0]), (std::vector<float>{scale, 2 * scale, 3 * scale, 4 * scale}));
  }
}

TEST_F(ExecutorStateTest, ChecksRefuseStatesTheFileLacksAndWritesToWeights) {
  auto replace = [](uint32_t index, schema::Storage storage, std::vector<int64_t> shape,
                    const char *name, bool zeroInit = false) {
    return [=](flatbuffers::FlatBufferBuilder &b, Buffers &buffers) {
      buffers[index] =
          schema::CreateBufferDirect(b, storage, schema::DType::F32, &shape, 0, name, 0, zeroInit);
    };
  };
  struct Case {
    std::function<void(flatbuffers::FlatBufferBuilder &, Buffers &)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {replace(1, schema::Storage::State, {4}, "v"),
       "state 'v' is missing from " + path("weights.safetensors") + " (and is not zero_init)"},
      {replace(6, schema::Storage::State, {4}, "w", true),
       "buffers 1 and 6 are the state 'w' with another element type, shape or initial value"},
      {replace(3, schema::Storage::State, {1}, nullptr, true),
       "buffer 3 is a state without a name"},
      {replace(6, schema::Storage::Weight, {4}, "w"),
       "step 1 (copy) writes buffer 6, the weight 'w', which is read-only"}};
  for (const Case &bad : cases) {
    const Artifact made = artifact(program(bad.edit));
    EXPECT_EQ(check(made).message(), "p.program: " + bad.message);
  }
  // The shape of a state the file holds must be the file's.
  const Artifact made = artifact(program([](flatbuffers::FlatBufferBuilder &b, Buffers &buffers) {
    const std::vector<int64_t> shape{2, 2};
    buffers[1] =
        schema::CreateBufferDirect(b, schema::Storage::State, schema::DType::F32, &shape, 0, "w");
  }));
  EXPECT_EQ(check(made).message(), "p.program: state 'w' is float32 [4] in " +
                                       path("weights.safetensors") +
                                       "; the program expects float32 [2, 2]");
}

} // namespace
} // namespace shardc::rt
