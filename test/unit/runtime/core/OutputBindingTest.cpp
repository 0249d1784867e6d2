//===- OutputBindingTest.cpp - outputs written in the caller's tensors ----===//
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuDevice.h"
#include "test/unit/runtime/TestPrograms.h"

#include <gtest/gtest.h>

namespace shardc::rt {
namespace {

/// Input x [2, 4]; arena a = x + x and c = a + x; v a [8] view of a.
/// Outputs, in order: a, v (a second output of a's storage), x (an input),
/// c.
std::vector<uint8_t> program() {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<schema::Buffer>> buffers;
  auto buffer = [&](schema::Storage storage, std::vector<int64_t> shape, uint64_t offset,
                    uint32_t index) {
    buffers.push_back(
        schema::CreateBufferDirect(b, storage, schema::DType::F32, &shape, offset, nullptr, index));
  };
  buffer(schema::Storage::Input, {2, 4}, 0, 0); // 0 x
  buffer(schema::Storage::Arena, {2, 4}, 0, 0); // 1 a
  buffer(schema::Storage::View, {8}, 0, 1);     // 2 v
  buffer(schema::Storage::Arena, {2, 4}, 32, 0); // 3 c
  std::vector<flatbuffers::Offset<schema::Step>> steps;
  auto add = [&](std::vector<uint32_t> inputs, uint32_t output) {
    std::vector<uint32_t> outputs{output};
    steps.push_back(schema::CreateStepDirect(b, "add", &inputs, &outputs, nullptr, "add"));
  };
  add({0, 0}, 1);
  add({1, 0}, 3);
  std::vector<flatbuffers::Offset<schema::Output>> outputs;
  for (auto [name, id] : {std::pair("a", 1u), {"v", 2u}, {"x", 0u}, {"c", 3u}})
    outputs.push_back(schema::CreateOutputDirect(b, name, id));
  return test::finishProgram(b, 64, buffers, steps, outputs, MeshShape{});
}

HostTensor tensor(Shape shape, std::vector<float> values) {
  HostTensor t(DType::F32, std::move(shape));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> values(const HostTensor &t) {
  std::vector<float> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

TEST(OutputBindingTest, BindsArenaOutputsOnceAndCopiesTheRest) {
  const std::vector<uint8_t> bytes = program();
  const schema::Program &prog = *schema::GetProgram(bytes.data());
  std::vector<TensorView> buffers(4);
  std::vector<TensorView> in0(2), out0(1), in1(2), out1(1);
  OutputBinding binding(prog, buffers, {{&in0, &out0}, {&in1, &out1}});
  EXPECT_TRUE(binding.bound(0));  // a
  EXPECT_FALSE(binding.bound(1)); // v: a's storage is taken by output 0
  EXPECT_FALSE(binding.bound(2)); // x: an input
  EXPECT_TRUE(binding.bound(3));  // c
  std::vector<HostTensor> outputs(4);
  buffers[1] = {nullptr, DType::F32, {2, 4}};
  buffers[3] = {nullptr, DType::F32, {2, 4}};
  binding.bind(outputs);
  void *a = outputs[0].bytes.data(), *c = outputs[3].bytes.data();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(outputs[0].shape, (Shape{2, 4}));
  // Every view of a's storage, wherever a step reads or writes it.
  EXPECT_EQ(buffers[1].data, a);
  EXPECT_EQ(buffers[2].data, a);
  EXPECT_EQ(out0[0].data, a);
  EXPECT_EQ(in1[0].data, a);
  EXPECT_EQ(out1[0].data, c);
  EXPECT_EQ(in0[0].data, nullptr); // x is not bound
  binding.bind(outputs);           // the same tensors again: kept
  EXPECT_EQ(outputs[0].bytes.data(), a);
}

TEST(OutputBindingTest, ExecutorWritesBoundOutputsInPlaceAndCopiesTheOthers) {
  Artifact artifact;
  artifact.target = "cpu";
  artifact.inputs = {{"x", DType::F32, {2, 4}}};
  artifact.programBytes = program();
  artifact.program = schema::GetProgram(artifact.programBytes.data());
  cpu::CpuDevice device;
  auto executor = Executor::prepare(artifact, device);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  std::vector<HostTensor> outputs;
  outputs.push_back(HostTensor(DType::F32, {3})); // the wrong shape: remade
  for (float scale : {1.0f, 2.0f}) {
    HostTensor x = tensor({2, 4}, {1 * scale, 2 * scale, 3 * scale, 4 * scale, 5 * scale,
                                   6 * scale, 7 * scale, 8 * scale});
    const void *before = outputs.size() == 4 ? outputs[0].bytes.data() : nullptr;
    ASSERT_TRUE((*executor)->run({&x}, outputs).ok());
    ASSERT_EQ(outputs.size(), 4u);
    if (before) {
      EXPECT_EQ(outputs[0].bytes.data(), before) << "a bound output keeps its tensor";
    }
    std::vector<float> a, c;
    for (float v : values(x)) {
      a.push_back(2 * v);
      c.push_back(3 * v);
    }
    EXPECT_EQ(values(outputs[0]), a);
    EXPECT_EQ(outputs[0].shape, (Shape{2, 4}));
    EXPECT_EQ(values(outputs[1]), a);
    EXPECT_EQ(outputs[1].shape, (Shape{8}));
    EXPECT_EQ(values(outputs[2]), values(x));
    EXPECT_EQ(values(outputs[3]), c);
  }
}

} // namespace
} // namespace shardc::rt
