//===- WeightPageReleaseTest.cpp - which weights' file pages go, and when --===//
#include "runtime/core/WeightPageRelease.h"

#include "test/unit/runtime/TestPrograms.h"

#include <gtest/gtest.h>

namespace shardc::rt {
namespace {

/// A state that copied the inputs at the positions it is given.
class CopiedInputs : public KernelState {
public:
  explicit CopiedInputs(std::vector<size_t> inputs) : inputs_(std::move(inputs)) {}
  bool copiesInput(size_t index) const override {
    return std::find(inputs_.begin(), inputs_.end(), index) != inputs_.end();
  }

private:
  std::vector<size_t> inputs_;
};

/// Buffers: 0 input x; 1 weight "a"; 2 a view of 1; 3 weight "b"; 4 arena.
/// Steps: 0 linear(x, view of a), 1 linear(x, a), 2 linear(x, b), 3 gather(b, x).
std::vector<uint8_t> program() {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> shape{2, 2};
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers{
      schema::CreateBufferDirect(b, schema::Storage::Input, schema::DType::F32, &shape, 0,
                                 nullptr, 0),
      schema::CreateBufferDirect(b, schema::Storage::Weight, schema::DType::F32, &shape, 0, "a", 0),
      schema::CreateBufferDirect(b, schema::Storage::View, schema::DType::F32, &shape, 0, nullptr,
                                 1),
      schema::CreateBufferDirect(b, schema::Storage::Weight, schema::DType::F32, &shape, 0, "b", 0),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &shape, 0, nullptr,
                                 0)};
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  auto step = [&](const char *kernel, std::vector<uint32_t> inputs) {
    const std::vector<uint32_t> outputs{4};
    steps.push_back(schema::CreateStepDirect(b, kernel, &inputs, &outputs, nullptr, "s"));
  };
  step("linear", {0, 2});
  step("linear", {0, 1});
  step("linear", {0, 3});
  step("gather", {3, 0});
  return test::finishProgram(b, 64, buffers, steps, {}, MeshShape{});
}

TEST(WeightPageReleaseTest, ReleasesAWeightAfterItsLastReaderWhenEveryReaderCopiedIt) {
  const std::vector<uint8_t> bytes = program();
  std::vector<std::string> released;
  WeightPageRelease release(*schema::GetProgram(bytes.data()),
                            [&](const std::string &name) { released.push_back(name); });
  CopiedInputs weightCopied({1});
  release.stepPrepared(0, &weightCopied); // reads a through a view
  EXPECT_TRUE(released.empty()) << "step 1 reads a too";
  release.stepPrepared(1, &weightCopied);
  EXPECT_EQ(released, std::vector<std::string>{"a"});
  release.stepPrepared(2, &weightCopied);
  release.stepPrepared(3, nullptr); // gather reads b from the file
  EXPECT_EQ(released, std::vector<std::string>{"a"});
}

TEST(WeightPageReleaseTest, KeepsAWeightThatOneReaderReadsInPlace) {
  const std::vector<uint8_t> bytes = program();
  std::vector<std::string> released;
  WeightPageRelease release(*schema::GetProgram(bytes.data()),
                            [&](const std::string &name) { released.push_back(name); });
  CopiedInputs weightCopied({1}), inputCopied({0});
  release.stepPrepared(0, &inputCopied); // copied x, not the view of a
  release.stepPrepared(1, &weightCopied);
  release.stepPrepared(2, &weightCopied);
  CopiedInputs gatherCopied({0}); // b is gather's input 0
  release.stepPrepared(3, &gatherCopied);
  EXPECT_EQ(released, std::vector<std::string>{"b"});
}

TEST(WeightPageReleaseTest, NeverReleasesAState) {
  // A state's initial value is copied when the executor prepares; the file
  // tensor of its name is no weight any step reads.
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> shape{2, 2};
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers{
      schema::CreateBufferDirect(b, schema::Storage::Input, schema::DType::F32, &shape, 0,
                                 nullptr, 0),
      schema::CreateBufferDirect(b, schema::Storage::State, schema::DType::F32, &shape, 0, "s", 0),
      schema::CreateBufferDirect(b, schema::Storage::Arena, schema::DType::F32, &shape, 0, nullptr,
                                 0)};
  const std::vector<uint32_t> inputs{0, 1}, outputs{2};
  std::vector<flatbuffers::Offset<schema::Step>> steps{
      schema::CreateStepDirect(b, "linear", &inputs, &outputs, nullptr, "s")};
  const std::vector<uint8_t> bytes = test::finishProgram(b, 64, buffers, steps, {}, MeshShape{});
  std::vector<std::string> released;
  WeightPageRelease release(*schema::GetProgram(bytes.data()),
                            [&](const std::string &name) { released.push_back(name); });
  CopiedInputs stateCopied({1});
  release.stepPrepared(0, &stateCopied);
  EXPECT_TRUE(released.empty());
}

} // namespace
} // namespace shardc::rt
