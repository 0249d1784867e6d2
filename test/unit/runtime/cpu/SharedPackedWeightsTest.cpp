//===- SharedPackedWeightsTest.cpp - one packed copy of a weight block ----===//
#include "TestUtil.h"

#include "runtime/cpu/CpuBackend.h"
#include "runtime/cpu/PackedLinear.h"
#include "runtime/cpu/SharedPackedWeights.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace shardc::rt::cpu::test {
namespace {

using dnnl::memory;

std::unique_ptr<PackedLinear> preparedOn(HostTensor &x, HostTensor &w, bool transposed,
                                         HostTensor &out) {
  auto packed = PackedLinear::prepare(x.view(), w.view(), nullptr, transposed, out.view(),
                                      /*constantWeight=*/true);
  EXPECT_TRUE(packed.ok()) << packed.status().message();
  return packed.ok() ? std::move(*packed) : nullptr;
}

/// The copy sharedPackedBlock gave, or null (its error reported).
std::shared_ptr<const memory> copyOf(StatusOr<std::shared_ptr<const memory>> got) {
  EXPECT_TRUE(got.ok()) << got.status().message();
  return got.ok() ? std::move(*got) : nullptr;
}

/// A [k, n] row-major fp32 layout.
memory::desc plainLayout(int64_t k, int64_t n) {
  return memory::desc({k, n}, memory::data_type::f32, memory::format_tag::ab);
}

// Two steps on one weight (a tied weight's readers; the same step of two
// in-process ranks) hold one packed copy, which lives until both are gone,
// and both compute the product.
TEST(CpuSharedPackedWeightsTest, StepsOnOneWeightShareOnePackedCopy) {
  ThreadScope threads(1);
  Rng rng(12);
  HostTensor x = random(DType::F32, {16, 24}, rng), w = random(DType::F32, {24, 40}, rng);
  HostTensor first(DType::F32, {16, 40}), second(DType::F32, {16, 40});
  const PackedBlocks before = livePackedBlocks();
  auto a = preparedOn(x, w, false, first);
  ASSERT_TRUE(a);
  const PackedBlocks one = livePackedBlocks();
  EXPECT_EQ(one.count, before.count + 1);
  EXPECT_GE(one.bytes, before.bytes + 24 * 40 * sizeof(float));
  EXPECT_GE(one.peakBytes, one.bytes);
  EXPECT_EQ(peakPackedWeightBytes(), one.peakBytes);
  auto b = preparedOn(x, w, false, second);
  ASSERT_TRUE(b);
  EXPECT_EQ(livePackedBlocks().count, one.count);
  EXPECT_EQ(livePackedBlocks().bytes, one.bytes);
  ASSERT_TRUE(succeeded(a->run(x.view(), nullptr, first.view())));
  ASSERT_TRUE(succeeded(b->run(x.view(), nullptr, second.view())));
  const std::vector<double> expected = naiveLinear(x, w, nullptr, false);
  EXPECT_TRUE(closeTo(first, {16, 40}, expected, 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(second, {16, 40}, expected, 1e-5, 1e-5));
  a.reset();
  EXPECT_EQ(livePackedBlocks().count, one.count);
  b.reset();
  EXPECT_EQ(livePackedBlocks().count, before.count);
  EXPECT_EQ(livePackedBlocks().bytes, before.bytes);
}

// Another weight of the same shape, or the same bytes read as [n, k], is
// another block: each is packed, and each step computes its own product.
TEST(CpuSharedPackedWeightsTest, OtherWeightsAreNotShared) {
  ThreadScope threads(1);
  Rng rng(13);
  HostTensor x = random(DType::F32, {8, 32}, rng);
  HostTensor w = random(DType::F32, {32, 32}, rng), other = random(DType::F32, {32, 32}, rng);
  HostTensor out1(DType::F32, {8, 32}), out2(DType::F32, {8, 32}), out3(DType::F32, {8, 32});
  const size_t before = livePackedBlocks().count;
  auto plain = preparedOn(x, w, false, out1);
  auto another = preparedOn(x, other, false, out2);
  auto transposed = preparedOn(x, w, true, out3);
  ASSERT_TRUE(plain && another && transposed);
  EXPECT_EQ(livePackedBlocks().count, before + 3);
  ASSERT_TRUE(succeeded(plain->run(x.view(), nullptr, out1.view())));
  ASSERT_TRUE(succeeded(another->run(x.view(), nullptr, out2.view())));
  ASSERT_TRUE(succeeded(transposed->run(x.view(), nullptr, out3.view())));
  EXPECT_TRUE(closeTo(out1, {8, 32}, naiveLinear(x, w, nullptr, false), 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(out2, {8, 32}, naiveLinear(x, other, nullptr, false), 1e-5, 1e-5));
  EXPECT_TRUE(closeTo(out3, {8, 32}, naiveLinear(x, w, nullptr, true), 1e-5, 1e-5));
}

// Ranks preparing at the same time: the block is packed once and every
// asker gets that copy.
TEST(CpuSharedPackedWeightsTest, PacksOnceForThreadsAskingTogether) {
  const float weight[6] = {1, 2, 3, 4, 5, 6};
  const WeightBlock block{weight, false, 2, 3, 0, 3};
  std::atomic<int> packs{0};
  auto pack = [&] {
    packs.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return memory(plainLayout(2, 3), dnnl::engine(dnnl::engine::kind::cpu, 0));
  };
  std::vector<std::shared_ptr<const memory>> got(4);
  std::vector<std::thread> askers;
  for (size_t t = 0; t < got.size(); ++t)
    askers.emplace_back([&, t] { got[t] = copyOf(sharedPackedBlock(block, plainLayout(2, 3), pack)); });
  for (std::thread &asker : askers)
    asker.join();
  EXPECT_EQ(packs.load(), 1);
  for (const auto &copy : got)
    EXPECT_EQ(copy.get(), got[0].get());
}

// The same block in another layout (another thread count's primitive), or
// other columns of the weight, is packed again; once no one holds a copy,
// asking again packs anew.
TEST(CpuSharedPackedWeightsTest, OtherLayoutsAndColumnsArePackedAgain) {
  const float weight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  int packs = 0;
  auto packInto = [&](const memory::desc &layout) {
    return [&, layout] {
      ++packs;
      return memory(layout, engine);
    };
  };
  const memory::desc rowMajor = plainLayout(2, 4);
  const memory::desc columnMajor({2, 4}, memory::data_type::f32, memory::format_tag::ba);
  const WeightBlock whole{weight, false, 2, 4, 0, 4}, half{weight, false, 2, 4, 0, 2};
  auto first = copyOf(sharedPackedBlock(whole, rowMajor, packInto(rowMajor)));
  auto again = copyOf(sharedPackedBlock(whole, rowMajor, packInto(rowMajor)));
  EXPECT_EQ(packs, 1);
  EXPECT_EQ(first.get(), again.get());
  auto otherLayout = copyOf(sharedPackedBlock(whole, columnMajor, packInto(columnMajor)));
  EXPECT_EQ(packs, 2);
  EXPECT_NE(otherLayout.get(), first.get());
  auto columns = copyOf(sharedPackedBlock(half, plainLayout(2, 2), packInto(plainLayout(2, 2))));
  EXPECT_EQ(packs, 3);
  EXPECT_NE(columns.get(), first.get());
  first.reset();
  again.reset();
  auto renewed = copyOf(sharedPackedBlock(whole, rowMajor, packInto(rowMajor)));
  EXPECT_EQ(packs, 4);
  EXPECT_TRUE(renewed);
}

// A pack that fails (the stored weight could not be read back) is the
// asker's error, and leaves nothing behind: the next asker packs.
TEST(CpuSharedPackedWeightsTest, AFailedPackIsReturnedAndNotKept) {
  const float weight[4] = {1, 2, 3, 4};
  const WeightBlock block{weight, false, 2, 2, 0, 2};
  int packs = 0;
  auto failing = [&]() -> StatusOr<memory> {
    ++packs;
    return Status::error("w.safetensors: changed since it was loaded");
  };
  auto failed = sharedPackedBlock(block, plainLayout(2, 2), failing);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "w.safetensors: changed since it was loaded");
  auto packed = copyOf(sharedPackedBlock(block, plainLayout(2, 2), [&] {
    ++packs;
    return memory(plainLayout(2, 2), dnnl::engine(dnnl::engine::kind::cpu, 0));
  }));
  EXPECT_TRUE(packed);
  EXPECT_EQ(packs, 2);
}

} // namespace
} // namespace shardc::rt::cpu::test
