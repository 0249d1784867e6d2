//===- ThreadingTest.cpp - the thread setting and its effect --------------===//
#include "TestUtil.h"

namespace shardc::rt::cpu::test {
namespace {

TEST(CpuThreadingTest, SetAndRestore) {
  const int saved = numThreads();
  EXPECT_GE(saved, 1);
  setNumThreads(3);
  EXPECT_EQ(numThreads(), 3);
  setNumThreads(0); // the default again
  EXPECT_GE(numThreads(), 1);
  setNumThreads(saved);
  EXPECT_TRUE(hasOpenMP()); // the build links OpenMP when the compiler has it
}

TEST(CpuThreadingTest, KernelsGiveTheSameBitsOnOneOrTwoThreads) {
  Rng rng(91);
  HostTensor x = random(DType::F32, {512, 300}, rng, -4, 4);
  HostTensor b = random(DType::F32, {300}, rng);
  HostTensor scale = random(DType::F32, {300}, rng);
  auto runAll = [&](int threads) {
    ThreadScope scope(threads);
    std::vector<HostTensor> results;
    results.emplace_back(DType::F32, Shape{512, 300});
    EXPECT_TRUE(succeeded(add(x.view(), b.view(), results.back().view())));
    results.emplace_back(DType::F32, Shape{512, 300});
    EXPECT_TRUE(succeeded(unary(UnaryOp::Gelu, x.view(), results.back().view())));
    results.emplace_back(DType::F32, Shape{512, 300});
    EXPECT_TRUE(succeeded(softmax(x.view(), 1, results.back().view())));
    results.emplace_back(DType::F32, Shape{512, 300});
    EXPECT_TRUE(succeeded(layerNorm(x.view(), scale.view(), ptr(b.view()), 1, 1e-5,
                                    results.back().view())));
    results.emplace_back(DType::F32, Shape{300});
    EXPECT_TRUE(succeeded(reduce(ReduceOp::Sum, x.view(), {0}, false, results.back().view())));
    results.emplace_back(DType::F32, Shape{300, 512});
    EXPECT_TRUE(succeeded(transpose(x.view(), {1, 0}, results.back().view())));
    return results;
  };
  const std::vector<HostTensor> one = runAll(1), two = runAll(2);
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_TRUE(sameBits(one[i], two[i])) << "kernel " << i;
}

} // namespace
} // namespace shardc::rt::cpu::test
