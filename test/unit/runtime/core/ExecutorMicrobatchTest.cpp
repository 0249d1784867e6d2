//===- ExecutorMicrobatchTest.cpp - a program that runs its micro-batches ---===//
//
// A hand-built training step in 2 micro-batches: the loop adds each
// micro-batch's rows of the caller's input x [4, 2] into an accumulator,
// the step after the loop doubles the sum. Every run starts the sum from
// zeros; the checks refuse a loop or a cut that the program cannot run.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Executor.h"
#include "runtime/core/ProgramChecks.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

namespace shardc::rt {
namespace {

/// What the tests vary in the program.
struct Variant {
  int32_t microbatchDim = 0;
  bool accumulatorZeroInit = true;
  test::MicrobatchLoop loop{2, 2};
};

/// Buffers: 0 input x cut along `microbatchDim` ([2, 2] per micro-batch),
/// 1 the accumulator [2, 2], 2 arena (the sum), 3 arena (the doubled sum).
/// Steps: add(acc, x) -> 2, copy 2 -> acc (the loop), add(acc, acc) -> 3.
std::vector<uint8_t> program(const Variant &variant) {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> piece{2, 2};
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers{
      schema::CreateBufferDirect(b, schema::Storage::Input, schema::DType::F32, &piece, 0, nullptr,
                                 0, false, false, variant.microbatchDim),
      schema::CreateBufferDirect(b, schema::Storage::State, schema::DType::F32, &piece, 0,
                                 "microbatch_sum.0", 0, variant.accumulatorZeroInit, true),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &piece, 0,
                                 nullptr),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &piece, 64,
                                 nullptr)};
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  auto step = [&](const char *kernel, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
    steps.push_back(schema::CreateStepDirect(b, kernel, &inputs, &outputs, nullptr, "step"));
  };
  step("add", {1, 0}, {2});
  step("copy", {2}, {1});
  step("add", {1, 1}, {3});
  std::vector<flatbuffers::Offset<schema::Output>> outputs{schema::CreateOutputDirect(b, "y", 3)};
  return test::finishProgram(b, 128, buffers, steps, outputs, MeshShape{}, variant.loop);
}

using test::floats;

class ExecutorMicrobatchTest : public io::test::TempDir {
protected:
  Artifact artifact(std::vector<uint8_t> bytes, Shape input = {4, 2}) {
    const std::string file = path("weights.safetensors");
    EXPECT_TRUE(io::writeSafeTensors(file, std::vector<io::NamedTensor>{}).ok());
    auto weights = io::SafeTensorsFile::open(file);
    EXPECT_TRUE(weights.ok()) << weights.message();
    Artifact made;
    made.target = "cpu";
    made.inputs = {{"x", DType::F32, std::move(input)}};
    made.outputs = {{"y", DType::F32, {2, 2}}};
    made.programBytes = std::move(bytes);
    made.program = schema::GetProgram(made.programBytes.data());
    made.weights = std::make_shared<const io::SafeTensorsFile>(std::move(*weights));
    return made;
  }

  Status check(const Artifact &made) {
    return checkProgram(*made.program, made.inputs, made.outputs, *made.weights, "p.program");
  }

  cpu::CpuDevice device;
};

TEST_F(ExecutorMicrobatchTest, TheLoopSumsEveryMicrobatchFromZerosEachRun) {
  const Artifact made = artifact(program({}));
  ASSERT_TRUE(check(made).ok()) << check(made).message();
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  const HostTensor x = floats({4, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  std::vector<HostTensor> outputs;
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*executor)->run({&x}, outputs).ok());
    // (rows 0-1 + rows 2-3) doubled, the same every run.
    EXPECT_EQ(test::floatValues(outputs[0]), (std::vector<float>{22, 44, 66, 88})) << "run " << run;
  }
  // An accumulator is no state of the model (checkpoints skip it).
  EXPECT_TRUE((*executor)->states().empty());
}

TEST_F(ExecutorMicrobatchTest, MicrobatchesCutAnyDim) {
  Variant variant;
  variant.microbatchDim = 1;
  // x [2, 4] cut along dim 1: columns 0-1, then 2-3.
  const Artifact made = artifact(program(variant), {2, 4});
  ASSERT_TRUE(check(made).ok()) << check(made).message();
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  const HostTensor x = floats({2, 4}, {1, 2, 10, 20, 3, 4, 30, 40});
  std::vector<HostTensor> outputs;
  ASSERT_TRUE((*executor)->run({&x}, outputs).ok());
  EXPECT_EQ(test::floatValues(outputs[0]), (std::vector<float>{22, 44, 66, 88}));
}

TEST_F(ExecutorMicrobatchTest, ChecksRefuseLoopsAndCutsTheProgramCannotRun) {
  struct Case {
    Variant variant;
    Shape input;
    std::string message;
  };
  Variant noLoop, pastEnd, notZero, badDim;
  noLoop.loop = {0, 0};
  pastEnd.loop = {2, 4};
  notZero.accumulatorZeroInit = false;
  badDim.microbatchDim = 2;
  const Case cases[] = {
      {noLoop, {4, 2}, "p.program: buffer 0 is cut into micro-batches, but the program runs none"},
      {pastEnd, {4, 2}, "p.program: its micro-batch loop ends after step 4 of 3"},
      {notZero, {4, 2}, "p.program: buffer 1 is an accumulator that does not start as zeros"},
      {badDim, {4, 2},
       "p.program: buffer 0 cuts input 'x' [4, 2] along dim 2 into 2 micro-batches, which it "
       "does not have"},
      {Variant{}, {3, 2},
       "p.program: buffer 0 cuts input 'x' [3, 2] along dim 0 into 2 micro-batches, which it "
       "does not have"},
      {Variant{}, {6, 2},
       "p.program: buffer 0 is input 'x' as float32 [2, 2]; the manifest declares float32 [6, 2] "
       "in 2 micro-batches"}};
  for (const Case &c : cases) {
    const Artifact made = artifact(program(c.variant), c.input);
    EXPECT_EQ(check(made).message(), c.message);
  }
}

} // namespace
} // namespace shardc::rt
