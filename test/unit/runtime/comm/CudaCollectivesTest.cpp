//===- CudaCollectivesTest.cpp - the CUDA collective kernels, in-process --===//
//
// Every collective kernel of runtime/cuda on ranks that are threads sharing
// GPU 0, each in its own stream, talking through the in-process world: the
// staged path of `shardrun --np N` on one GPU. Results must equal the CPU
// reference exactly (CollectiveChecks.h). Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "GpuRank.h"

#include "runtime/comm/InProcess.h"

namespace shardc::rt::test {
namespace {

using namespace std::chrono_literals;

class CudaInProcess : public ::testing::TestWithParam<int> {};

TEST_P(CudaInProcess, EveryKernelOnSharedGpu) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  comm::InProcessWorld world(GetParam(), 120s);
  Status status = world.run([&](int, Communicator &comm) {
    GpuRank gpu;
    checkAllKernels(comm, kEveryKernelType);
    return Status();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

// Groups split from the world, as the executor makes them per mesh axis.
TEST_P(CudaInProcess, KernelsOnSplitGroups) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  const int n = GetParam();
  comm::InProcessWorld world(2 * n, 120s);
  Status status = world.run([&](int rank, Communicator &comm) {
    GpuRank gpu;
    auto group = comm.split(rank / n, rank % n);
    if (!group)
      return group.status();
    checkAllKernels(**group, {DType::F32, DType::BF16});
    return Status();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

INSTANTIATE_TEST_SUITE_P(Ranks, CudaInProcess, ::testing::Values(1, 2, 3));

} // namespace
} // namespace shardc::rt::test
