//===- StatePoolTest.cpp - executors that share their states ---------------===//
//
// Two hand-built programs on one StatePool, as a pipeline rank prepares its
// programs: the writer does w <- w + x, the reader returns w and sums it
// into an accumulator. Each sees the other's writes; the accumulator keeps
// its sum from run to run until the pool zeroes it. A program that names a
// pooled state as another tensor is refused.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcess.h"
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

using schema::Storage;
using test::BufferSpec;
using test::floats;
using test::floatValues;

/// w <- w + x: buffers 0 input x [2], 1 the state w, 2 arena.
std::vector<uint8_t> writer() {
  return test::floatProgram(
      {{Storage::Input, {2}}, {Storage::State, {2}, 0, "w"}, {Storage::Arena, {2}}},
      {{"add", {1, 0}, {2}}, {"copy", {2}, {1}}}, {}, MeshShape{});
}

/// y = w, sum <- sum + w: buffers 0 the state w, 1 the accumulator
/// w.sum, 2 and 3 arena; outputs y and the accumulator.
std::vector<uint8_t> reader(BufferSpec sum = {Storage::State, {2}, 0, "w.sum", 0, true, true}) {
  return test::floatProgram(
      {{Storage::State, {2}, 0, "w"}, sum, {Storage::Arena, {2}, 0}, {Storage::Arena, {2}, 64}},
      {{"copy", {0}, {2}}, {"add", {1, 0}, {3}}, {"copy", {3}, {1}}}, {{"y", 2}, {"sum", 1}},
      MeshShape{});
}

class StatePoolTest : public io::test::TempDir {
protected:
  /// The artifact of `bytes` taking `inputs` [2] and giving `outputs` [2],
  /// with the weight file w = [10, 20].
  Artifact artifact(std::vector<uint8_t> bytes, std::vector<std::string> inputs,
                    std::vector<std::string> outputs) {
    const std::string file = path("weights.safetensors");
    EXPECT_TRUE(
        io::writeSafeTensors(file, std::vector<io::NamedTensor>{{"w", floats({2}, {10, 20})}})
            .ok());
    auto weights = io::SafeTensorsFile::open(file);
    EXPECT_TRUE(weights.ok()) << weights.message();
    Artifact made;
    made.target = "cpu";
    for (const std::string &name : inputs)
      made.inputs.push_back({name, DType::F32, {2}});
    for (const std::string &name : outputs)
      made.outputs.push_back({name, DType::F32, {2}});
    made.programBytes = std::move(bytes);
    made.program = schema::GetProgram(made.programBytes.data());
    made.weights = std::make_shared<const io::SafeTensorsFile>(std::move(*weights));
    EXPECT_TRUE(
        checkProgram(*made.program, made.inputs, made.outputs, *made.weights, "p.program").ok());
    return made;
  }

  /// Runs `body` on a one-rank world, whose communicator a pooled executor
  /// is prepared with (a pipeline rank's always has one).
  void onOneRank(const std::function<void(Communicator &, CollectiveGroups &)> &body) {
    comm::InProcessWorld world(1);
    Status status = world.run([&](int, Communicator &communicator) {
      CollectiveGroups groups(MeshShape{}, communicator);
      body(communicator, groups);
      return Status();
    });
    ASSERT_TRUE(status.ok()) << status.message();
  }

  cpu::CpuDevice device;
};

TEST_F(StatePoolTest, ExecutorsOfOnePoolShareStatesAndAccumulateUntilZeroed) {
  const Artifact write = artifact(writer(), {"x"}, {}), read = artifact(reader(), {}, {"y", "sum"});
  onOneRank([&](Communicator &world, CollectiveGroups &groups) {
    StatePool pool(device);
    auto writing = Executor::prepare(write, device, world, groups, &pool);
    auto reading = Executor::prepare(read, device, world, groups, &pool);
    ASSERT_TRUE(writing.ok()) << writing.message();
    ASSERT_TRUE(reading.ok()) << reading.message();
    const HostTensor x = floats({2}, {1, 2});
    std::vector<HostTensor> none, outputs;
    ASSERT_TRUE((*writing)->run({&x}, none).ok());
    ASSERT_TRUE((*reading)->run({}, outputs).ok());
    EXPECT_EQ(floatValues(outputs[0]), (std::vector<float>{11, 22}));
    EXPECT_EQ(floatValues(outputs[1]), (std::vector<float>{11, 22}));
    // A pooled run leaves the accumulator alone: the sum goes on.
    ASSERT_TRUE((*writing)->run({&x}, none).ok());
    ASSERT_TRUE((*reading)->run({}, outputs).ok());
    EXPECT_EQ(floatValues(outputs[0]), (std::vector<float>{12, 24}));
    EXPECT_EQ(floatValues(outputs[1]), (std::vector<float>{23, 46}));
    ASSERT_TRUE(pool.zeroAccumulators().ok());
    ASSERT_TRUE((*reading)->run({}, outputs).ok());
    EXPECT_EQ(floatValues(outputs[1]), (std::vector<float>{12, 24}));
    // One w, read and written through the pool; the accumulator is no state.
    ASSERT_EQ(pool.states().size(), 1u);
    EXPECT_EQ(pool.states()[0].name, "w");
    EXPECT_EQ(pool.readState("sum").message(), "the program has no state 'sum'");
    HostTensor zeros = floats({2}, {0, 0});
    ASSERT_TRUE(pool.writeState("w", zeros.view()).ok());
    ASSERT_TRUE((*writing)->run({&x}, none).ok());
    auto w = pool.readState("w");
    ASSERT_TRUE(w.ok()) << w.message();
    EXPECT_EQ(floatValues(*w), (std::vector<float>{1, 2}));
    EXPECT_EQ(floatValues(*(*reading)->readState("w")), (std::vector<float>{1, 2}));
  });
  // The file keeps the initial value.
  EXPECT_EQ(std::memcmp(write.weights->find("w")->data, floats({2}, {10, 20}).bytes.data(), 8), 0);
}

TEST_F(StatePoolTest, AnExecutorOfItsOwnZeroesItsAccumulatorsEveryRun) {
  const Artifact read = artifact(reader(), {}, {"y", "sum"});
  auto reading = Executor::prepare(read, device);
  ASSERT_TRUE(reading.ok()) << reading.message();
  std::vector<HostTensor> outputs;
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*reading)->run({}, outputs).ok());
    EXPECT_EQ(floatValues(outputs[1]), (std::vector<float>{10, 20})) << "run " << run;
  }
}

TEST_F(StatePoolTest, RefusesAStateNamedAsAnotherTensor) {
  const Artifact read = artifact(reader(), {}, {"y", "sum"});
  // w.sum as a zero_init state of the model, where the reader sums into it.
  const Artifact state =
      artifact(reader({Storage::State, {2}, 0, "w.sum", 0, true, false}), {}, {"y", "sum"});
  onOneRank([&](Communicator &world, CollectiveGroups &groups) {
    StatePool pool(device);
    ASSERT_TRUE(Executor::prepare(read, device, world, groups, &pool).ok());
    auto refused = Executor::prepare(state, device, world, groups, &pool);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.message(), "state 'w.sum' is float32 [2] (starting as zeros) here but "
                                 "float32 [2] (an accumulator) in an earlier program of the rank");
  });
}

} // namespace
} // namespace shardc::rt
