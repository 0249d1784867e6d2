//===- NcclTest.cpp - the NCCL communicator on one GPU ----------*- C++ -*-===//
//
// NCCL refuses two ranks on one GPU, so on a one-GPU machine the NCCL world
// has one rank: every collective kernel runs through it (NCCL's own
// collectives, deferred sends grouped with their receives), on split groups
// too; and the failure paths — a rank that never joins, a collective that
// never completes — end within the timeout with one line that lists the
// last collectives. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "GpuRank.h"

#include "runtime/comm/Nccl.h"
#include "runtime/comm/TcpBootstrap.h"

#include <future>

namespace shardc::rt::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

comm::ShareBytes nobody() {
  return [](void *, size_t) { return Status(); };
}

TEST(Nccl, OneRankRunsEveryKernel) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  std::string failure;
  comm::NcclOptions options;
  options.timeout = 120s;
  options.onFailure = [&](const std::string &message) { failure = message; };
  // The TCP bootstrap of a one-rank world has nobody to talk to.
  auto share = [](void *data, size_t bytes) {
    return comm::tcpBroadcast({0, 1, "127.0.0.1", 29500, 10s}, data, bytes);
  };
  auto world = comm::joinNcclWorld(options, share);
  ASSERT_TRUE(world.ok()) << world.status().message();
  EXPECT_TRUE((*world)->onDevice());
  EXPECT_EQ((*world)->size(), 1);
  {
    GpuRank gpu;
    checkAllKernels(**world, kEveryKernelType);
    auto group = (*world)->split(0, 0);
    ASSERT_TRUE(group.ok()) << group.status().message();
    ASSERT_TRUE(*group);
    EXPECT_EQ((*group)->size(), 1);
    checkAllKernels(**group, {DType::F32, DType::BF16});
    auto none = (*world)->split(-1, 0);
    ASSERT_TRUE(none.ok()) << none.status().message();
    EXPECT_FALSE(*none);
  }
  world->reset(); // finalize, destroy
  EXPECT_EQ(failure, "");
  EXPECT_NE(comm::ncclVersion(), "unknown");
}

TEST(Nccl, ARankThatNeverJoinsFailsTheSetUpAtTheTimeout) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  comm::NcclOptions options;
  options.rank = 0;
  options.size = 2; // rank 1 never comes
  options.timeout = 1s;
  auto start = Clock::now();
  auto world = comm::joinNcclWorld(options, nobody());
  EXPECT_LT(Clock::now() - start, 30s);
  ASSERT_FALSE(world.ok());
  EXPECT_EQ(world.status().message(),
            "NCCL set-up of rank 0 of 2 did not finish within 1 s (a rank did not join or "
            "stopped taking part); NCCL aborted; last collectives: none issued");
}

// With one rank, a receive that no send matches never completes: the
// watchdog aborts it once it has run for the timeout and reports it with
// the collectives before it.
TEST(Nccl, AHungCollectiveIsAbortedWithItsHistory) {
  if (!haveGpu())
    GTEST_SKIP() << "no CUDA device";
  std::promise<std::string> reported;
  comm::NcclOptions options;
  options.timeout = 1s;
  options.onFailure = [&](const std::string &message) { reported.set_value(message); };
  auto world = comm::joinNcclWorld(options, nobody());
  ASSERT_TRUE(world.ok()) << world.status().message();
  GpuRank gpu;
  void *buffer = nullptr;
  ASSERT_EQ(cudaMalloc(&buffer, 256), cudaSuccess);
  (*world)->setStream(gpu.stream());
  ASSERT_TRUE((*world)->allReduceSum(buffer, 64, DType::F32).ok());
  ASSERT_TRUE((*world)->recv(buffer, 64, 0).ok()); // enqueued; never matched
  auto message = reported.get_future();
  ASSERT_EQ(message.wait_for(60s), std::future_status::ready) << "the watchdog never fired";
  const std::string line = message.get();
  EXPECT_EQ(line.find("rank 0: recv 64 B from 0 on group 0 (1 ranks) (#2) timed out after 1 s "
                      "(another rank stopped taking part or never joined); NCCL aborted; last "
                      "collectives: #1 all_reduce 256 B float32 on group 0 (1 ranks) done, #2 "
                      "recv 64 B from 0 on group 0 (1 ranks) running for "),
            0u)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
  // Later calls fail with the same line (less the rank, which callers add).
  Status after = (*world)->allReduceSum(buffer, 64, DType::F32);
  EXPECT_EQ("rank 0: " + after.message(), line);
  world->reset(); // aborted already: no finalize
  (void)cudaFree(buffer);
}

} // namespace
} // namespace shardc::rt::test
