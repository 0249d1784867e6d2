//===- HeldWeightsTest.cpp - which weights stay in memory, and reading them again -===//
//
// A program y = linear(x, w) + c on the CPU: the linear packs w (its stored
// bytes then leave memory), the add reads c in place (it stays while the
// executor lives). A weight needed again later (a new executor, after a
// failed run) is read back from the file, checked: a file changed since is
// one line naming it, an unchanged one gives the same results.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/runtime/TestPrograms.h"
#include "test/unit/runtime/io/TestUtil.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace shardc::rt {
namespace {

using test::floats;

constexpr int64_t kK = 4, kN = 16384; // w: 256 KiB, c: 128 KiB

/// Buffers: 0 input x [2, K], 1 weight w [K, N], 2 arena [2, N], 3 weight
/// c [2, N], 4 arena y [2, N]. Steps: linear(x, w) -> 2, add(2, c) -> y.
std::vector<uint8_t> program() {
  using S = schema::Storage;
  return test::floatProgram(
      {{S::Input, {2, kK}}, {S::Weight, {kK, kN}, 0, "w"}, {S::Arena, {2, kN}, 0},
       {S::Weight, {2, kN}, 0, "c"}, {S::Arena, {2, kN}, 2 * kN * 4}},
      {{"linear", {0, 1}, {2}}, {"add", {2, 3}, {4}}}, {{"y", 4}}, MeshShape{}, 4 * kN * 4);
}

class HeldWeightsTest : public io::test::TempDir {
protected:
  void SetUp() override {
    io::test::TempDir::SetUp();
    std::vector<float> w(kK * kN), c(2 * kN);
    for (int64_t k = 0; k < kK; ++k)
      for (int64_t n = 0; n < kN; ++n)
        w[size_t(k * kN + n)] = float((k + 1) * (n % 7 - 3));
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = float(i % 5);
    ASSERT_TRUE(io::writeSafeTensors(file(), std::vector<io::NamedTensor>{
                                                 {"w", floats({kK, kN}, w)},
                                                 {"c", floats({2, kN}, c)}})
                    .ok());
    original = io::test::readFile(file());
    const std::vector<float> in = test::floatValues(x);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t n = 0; n < kN; ++n) {
        float sum = c[size_t(r * kN + n)];
        for (int64_t k = 0; k < kK; ++k)
          sum += in[size_t(r * kK + k)] * w[size_t(k * kN + n)];
        expected.push_back(sum);
      }
  }

  std::string file() { return path("weights.safetensors"); }

  Artifact artifact() {
    auto weights = io::SafeTensorsFile::open(file());
    EXPECT_TRUE(weights.ok()) << weights.message();
    Artifact made;
    made.target = "cpu";
    made.inputs = {{"x", DType::F32, {2, kK}}};
    made.outputs = {{"y", DType::F32, {2, kN}}};
    made.programBytes = program();
    made.program = schema::GetProgram(made.programBytes.data());
    made.weights = std::make_shared<const io::SafeTensorsFile>(std::move(*weights));
    return made;
  }

  /// The bytes of the blocks wholly inside tensor `name`: what
  /// letting it go gives back.
  static size_t wholeBlocks(const io::SafeTensorsFile &weights, const std::string &name) {
    const auto *base = static_cast<const std::byte *>(weights.tensors()[0].view.data) -
                       weights.dataOffset(); // the first tensor begins the data
    const TensorView &tensor = *weights.find(name);
    const size_t begin = size_t(static_cast<const std::byte *>(tensor.data) - base);
    const size_t block = io::FileCopy::blockSize();
    return ((begin + tensor.bytes()) / block - (begin + block - 1) / block) * block;
  }

  /// Runs `executor` once; its result must be y.
  void expectRunGivesY(Executor &executor) {
    std::vector<HostTensor> outputs;
    Status status = executor.run({&x}, outputs);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(test::floatValues(outputs[0]), expected);
  }

  cpu::CpuDevice device;
  const HostTensor x = floats({2, kK}, {1, 2, 3, 4, 0, 1, 0, -1});
  std::vector<float> expected;
  std::string original;
};

TEST_F(HeldWeightsTest, APackedWeightLeavesMemoryAndOneReadInPlaceStays) {
  const Artifact made = artifact();
  ASSERT_EQ(made.weights->droppedBytes(), 0u) << "the load reads every weight";
  const size_t w = wholeBlocks(*made.weights, "w"), c = wholeBlocks(*made.weights, "c");
  ASSERT_GT(w, 0u);
  ASSERT_GT(c, 0u);
  auto executor = Executor::prepare(made, device);
  ASSERT_TRUE(executor.ok()) << executor.message();
  EXPECT_EQ(made.weights->droppedBytes(), w);
  expectRunGivesY(**executor);
  executor->reset();
  EXPECT_EQ(made.weights->droppedBytes(), w + c) << "no one reads c now";
}

// The weights the runs read are in memory (packed, or held): a file
// rewritten under them changes no run. A new executor (a prepare after a
// failed run) must read w again: from the changed file that is one line
// naming it, never a signal nor other weights.
TEST_F(HeldWeightsTest, AWeightNeededAgainFromAChangedFileIsAnErrorNamingIt) {
  const Artifact made = artifact();
  auto first = Executor::prepare(made, device);
  ASSERT_TRUE(first.ok()) << first.message();
  io::test::overwriteFile(file(), std::string(original.size(), '\x5a'));
  expectRunGivesY(**first);
  first->reset();
  auto second = Executor::prepare(made, device);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.message().find(file() + ": changed since it was loaded: bytes ["),
            std::string::npos)
      << second.message();
  EXPECT_EQ(second.message().find('\n'), std::string::npos);
  // Truncated instead: the same, its sizes named.
  ASSERT_EQ(::truncate(file().c_str(), 1000), 0);
  auto third = Executor::prepare(made, device);
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.message().find(file() + ": changed since it was loaded (" +
                                 std::to_string(original.size()) + " bytes then, 1000 now)"),
            std::string::npos)
      << third.message();
}

TEST_F(HeldWeightsTest, AWeightNeededAgainFromAnUnchangedFileIsAsLoaded) {
  const Artifact made = artifact();
  auto first = Executor::prepare(made, device);
  ASSERT_TRUE(first.ok()) << first.message();
  const size_t dropped = made.weights->droppedBytes();
  first->reset();
  auto second = Executor::prepare(made, device);
  ASSERT_TRUE(second.ok()) << second.message();
  EXPECT_EQ(made.weights->droppedBytes(), dropped);
  expectRunGivesY(**second);
}

// Executors that share the file (ranks as threads) while one lives read
// nothing again: the second finds w packed and c held, so even a file
// truncated in between does not stop it.
TEST_F(HeldWeightsTest, ExecutorsSharingTheFileReadNothingAgain) {
  const Artifact made = artifact();
  auto first = Executor::prepare(made, device);
  ASSERT_TRUE(first.ok()) << first.message();
  ASSERT_EQ(::truncate(file().c_str(), 0), 0);
  auto second = Executor::prepare(made, device);
  ASSERT_TRUE(second.ok()) << second.message();
  expectRunGivesY(**second);
  expectRunGivesY(**first);
}

} // namespace
} // namespace shardc::rt
