//===- InProcessTest.cpp - the in-process world: collectives, split, failure ===//
#include "CollectiveChecks.h"

#include "runtime/comm/InProcess.h"
#include "runtime/core/Mesh.h"
#include "test/unit/runtime/comm/WrappedGroup.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace shardc::rt::test {
namespace {

using comm::InProcessWorld;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Runs `body` on n rank threads; the world run must succeed.
void onRanks(int n, const std::function<void(Communicator &)> &body) {
  InProcessWorld world(n, 60s);
  Status status = world.run([&](int, Communicator &comm) {
    body(comm);
    return Status();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

const std::vector<DType> kSummable = {DType::F32,  DType::F64, DType::F16,
                                      DType::BF16, DType::I32, DType::I64};

class InProcessRanks : public ::testing::TestWithParam<int> {};

TEST_P(InProcessRanks, AllReduce) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (DType dtype : kSummable)
      for (int64_t count : {0, 1, 3, 17, 1000})
        checkAllReduce(comm, dtype, count);
  });
}

TEST_P(InProcessRanks, ReduceScatter) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (DType dtype : kSummable)
      for (int64_t count : {1, 5, 64})
        checkReduceScatter(comm, dtype, count);
  });
}

TEST_P(InProcessRanks, AllGatherAndAllToAll) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (DType dtype : {DType::F32, DType::I8, DType::Bool, DType::F16, DType::I64})
      for (int64_t count : {0, 1, 7}) {
        checkAllGather(comm, dtype, count);
        checkAllToAll(comm, dtype, count);
      }
  });
}

// Gathered along a dim that is not the first: the in-process world places
// each row from its owner; a wrapped group (which does not forward
// allGatherRows) runs the base class's gather into scratch memory.
TEST_P(InProcessRanks, AllGatherRows) {
  onRanks(GetParam(), [](Communicator &comm) {
    std::atomic<int> flushes{0};
    auto everyone = comm.split(0, comm.rank());
    ASSERT_TRUE(everyone.ok() && *everyone);
    WrappedGroup wrapped(std::move(*everyone), flushes);
    for (DType dtype : {DType::F32, DType::I8, DType::F16})
      for (auto [rows, width] : {std::pair<int64_t, int64_t>{3, 5}, {1, 7}, {4, 1}, {0, 3}}) {
        checkAllGatherRows(comm, dtype, rows, width);
        checkAllGatherRows(wrapped, dtype, rows, width);
      }
  });
}

TEST_P(InProcessRanks, AllToAllVWithUnequalAndEmptyBlocks) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (DType dtype : {DType::F32, DType::I8, DType::F16, DType::I64})
      for (int seed = 0; seed < 4; ++seed)
        checkAllToAllV(comm, dtype, seed);
  });
}

TEST_P(InProcessRanks, BroadcastFromEveryRoot) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (int root = 0; root < comm.size(); ++root)
      checkBroadcast(comm, DType::F32, 33, root);
  });
}

TEST_P(InProcessRanks, GatherOntoEveryRoot) {
  onRanks(GetParam(), [](Communicator &comm) {
    for (int root = 0; root < comm.size(); ++root)
      for (bool pointToPoint : {false, true}) {
        checkGather(comm, 33, root, pointToPoint);
        checkGather(comm, 0, root, pointToPoint);
      }
  });
}

TEST_P(InProcessRanks, SendAndReceive) {
  onRanks(GetParam(), [](Communicator &comm) {
    checkSendRecvRing(comm, 10);
    checkSendRecvRing(comm, 0);
    checkSendRecvRing(comm, 1 << 20);
  });
}

TEST_P(InProcessRanks, CpuCollectiveKernels) {
  onRanks(GetParam(), [](Communicator &comm) {
    checkAllKernels(comm, {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64,
                           DType::I8, DType::Bool});
  });
}

TEST_P(InProcessRanks, Split) {
  onRanks(GetParam(), [](Communicator &comm) { checkSplit(comm); });
}

INSTANTIATE_TEST_SUITE_P(Ranks, InProcessRanks, ::testing::Values(1, 2, 3, 4),
                         [](const auto &info) { return std::to_string(info.param) + "Ranks"; });

TEST(InProcessTest, FloatSumsAreIdenticalOnEveryRank) {
  // Ring all-reduce sums each block in a different order, but the all-gather
  // phase hands every rank the same bits.
  constexpr int kRanks = 4;
  constexpr int64_t kCount = 1001;
  std::vector<std::vector<float>> results(kRanks);
  InProcessWorld world(kRanks);
  auto inputOf = [](int rank, int64_t i) { return std::sin(0.37 * i + rank) * 1e3 / (i + 1); };
  Status status = world.run([&](int rank, Communicator &comm) {
    std::vector<float> data(kCount);
    for (int64_t i = 0; i < kCount; ++i)
      data[i] = float(inputOf(rank, i));
    Status result = comm.allReduceSum(data.data(), kCount, DType::F32);
    results[rank] = data;
    return result;
  });
  ASSERT_TRUE(status.ok()) << status.message();
  for (int rank = 1; rank < kRanks; ++rank)
    EXPECT_EQ(results[rank], results[0]) << "rank " << rank;
  for (int64_t i = 0; i < kCount; ++i) {
    double want = 0;
    for (int rank = 0; rank < kRanks; ++rank)
      want += float(inputOf(rank, i));
    EXPECT_NEAR(results[0][i], want, 1e-5 * std::abs(want) + 1e-4) << i;
  }
}

TEST(InProcessTest, HalfSumsAccumulateInFloat) {
  // 4 x (2048 + 1): in float16 every partial sum 2048 + 1 rounds back to
  // 2048, so adding in float16 would give 8192; float gives 8196, exact.
  InProcessWorld world(4);
  Status status = world.run([](int rank, Communicator &comm) {
    rt::Half value = rt::toHalf(rank == 0 ? 2048.f : 1.f);
    std::vector<rt::Half> data(5, value);
    if (Status s = comm.allReduceSum(data.data(), data.size(), DType::F16); !s)
      return s;
    for (const rt::Half &h : data)
      EXPECT_EQ(rt::toFloat(h), 2052.f);
    return Status();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(InProcessTest, TensorAndDataParallelGroupsOfA2x2Mesh) {
  const MeshShape mesh({"dp", "tp"}, {2, 2});
  onRanks(4, [&](Communicator &world) {
    auto groupOf = [&](std::vector<std::string> axes) {
      auto colorAndKey = mesh.groupColorAndKey(world.rank(), axes);
      EXPECT_TRUE(colorAndKey.ok());
      auto group = world.split(colorAndKey->first, colorAndKey->second);
      EXPECT_TRUE(group.ok());
      return std::move(*group);
    };
    std::unique_ptr<Communicator> tp = groupOf({"tp"}), dp = groupOf({"dp"});
    const std::vector<int64_t> coords = mesh.coordinates(world.rank());
    EXPECT_EQ(tp->rank(), coords[1]);
    EXPECT_EQ(dp->rank(), coords[0]);
    for (int round = 0; round < 3; ++round) {
      int64_t tpSum = world.rank() + round, dpSum = 10 * world.rank();
      ASSERT_TRUE(succeeded(tp->allReduceSum(&tpSum, 1, DType::I64)));
      ASSERT_TRUE(succeeded(dp->allReduceSum(&dpSum, 1, DType::I64)));
      // tp peers are ranks 2 dp + {0, 1}; dp peers are tp + {0, 2}.
      EXPECT_EQ(tpSum, 2 * (2 * coords[0]) + 1 + 2 * round);
      EXPECT_EQ(dpSum, 10 * (2 * coords[1] + 2));
    }
  });
}

TEST(InProcessTest, AFailedRankStopsTheOthersPromptly) {
  InProcessWorld world(4); // the default 10-minute timeout: only abort can end this
  std::vector<std::string> errors(4);
  Clock::time_point start = Clock::now();
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    if (rank == 2) {
      std::this_thread::sleep_for(50ms);
      return Status::error("boom");
    }
    float value = 1;
    Status result = comm.allReduceSum(&value, 1, DType::F32);
    errors[rank] = result.message();
    return result;
  });
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(status.message(), "rank 2: boom");
  EXPECT_EQ(world.failure(), "rank 2 failed: boom");
  for (int rank : {0, 1, 3})
    EXPECT_EQ(errors[rank], "rank 2 failed: boom") << "rank " << rank;
}

TEST(InProcessTest, AbortWakesABlockedReceive) {
  InProcessWorld world(2);
  std::string error;
  Clock::time_point start = Clock::now();
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    if (rank == 1) {
      std::this_thread::sleep_for(200ms);
      comm.abort("out of memory");
      return Status();
    }
    char byte;
    Status result = comm.recv(&byte, 1, 1);
    error = result.message();
    return Status(); // rank 0 does not report it: the world already failed
  });
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_EQ(error, "rank 1 failed: out of memory");
  EXPECT_EQ(status.message(), "rank 1 failed: out of memory");
}

TEST(InProcessTest, AnExceptionAbortsTheWorld) {
  InProcessWorld world(2);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    if (rank == 0)
      throw std::runtime_error("bad alloc");
    int32_t value = 0;
    return comm.allReduceSum(&value, 1, DType::I32);
  });
  EXPECT_EQ(status.message(), "rank 0: exception: bad alloc");
}

TEST(InProcessTest, ACollectiveTimesOutNamingTheAbsentRank) {
  InProcessWorld world(2, 200ms);
  Clock::time_point start = Clock::now();
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    if (rank == 1)
      return Status(); // never takes part
    float value = 1;
    return comm.allReduceSum(&value, 1, DType::F32);
  });
  auto elapsed = Clock::now() - start;
  EXPECT_GE(elapsed, 200ms);
  EXPECT_LT(elapsed, 3s);
  EXPECT_EQ(status.message(), "rank 0: all_reduce (group rank 0 of 2): timed out after 0.2 s "
                              "waiting for group rank 1 (world rank 1)");
}

TEST(InProcessTest, AReceiveTimesOut) {
  InProcessWorld world(2, 200ms);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    if (rank == 1)
      return Status(); // never sends
    float value = 1;
    return comm.recv(&value, sizeof value, 1);
  });
  EXPECT_EQ(status.message(), "rank 0: recv (group rank 0 of 2, from group rank 1): timed out "
                              "after 0.2 s waiting for world rank 1");
}

TEST(InProcessTest, ATaggedReceiveTakesOnlyItsMessage) {
  InProcessWorld world(2, 5s);
  auto name = [](uint64_t tag) { return "message " + std::to_string(tag); };
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    int32_t value = 10 * rank;
    if (rank == 1) {
      for (uint64_t tag : {7, 8})
        if (Status sent = comm.sendTagged(&value, sizeof value, 0, tag); !sent)
          return sent;
      return Status();
    }
    if (Status first = comm.recvTagged(&value, sizeof value, 1, 7, name); !first)
      return first;
    EXPECT_EQ(value, 10);
    value = -1;
    // The next message is 8, not 9: refused, its bytes left unread.
    Status second = comm.recvTagged(&value, sizeof value, 1, 9, name);
    EXPECT_EQ(value, -1);
    return second;
  });
  EXPECT_EQ(status.message(), "rank 0: expected message 9 from group rank 1; got message 8 (the "
                              "ranks disagree on the order)");
}

TEST(InProcessTest, RanksThatDisagreeOnTheCollectiveOrTypeGetAnError) {
  InProcessWorld world(2, 5s);
  std::vector<std::string> errors(2);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    float value = 1;
    Status result = rank == 0 ? comm.allReduceSum(&value, 1, DType::F32)
                              : comm.broadcast(&value, sizeof value, 0);
    errors[rank] = result.message();
    return result;
  });
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(errors[0], "all_reduce (group rank 0 of 2): group rank 1 is in broadcast (the ranks "
                       "disagree on the collective)");
  EXPECT_EQ(errors[1], "broadcast (group rank 1 of 2): group rank 0 is in all_reduce (the ranks "
                       "disagree on the collective)");
  status = InProcessWorld(2, 5s).run([&](int rank, Communicator &comm) -> Status {
    int32_t value = 1;
    return comm.allReduceSum(&value, 1, rank == 0 ? DType::I32 : DType::F32);
  });
  EXPECT_NE(status.message().find("gives another element type (the ranks disagree)"),
            std::string::npos)
      << status.message();
}

TEST(InProcessTest, RanksThatDisagreeOnASizeGetAnError) {
  InProcessWorld world(2, 5s);
  std::vector<std::string> errors(2);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    std::vector<char> in(rank == 0 ? 8 : 16), out(2 * in.size());
    Status result = comm.allGather(in.data(), out.data(), in.size());
    errors[rank] = result.message();
    return result;
  });
  EXPECT_FALSE(status.ok());
  const std::string both = errors[0] + "|" + errors[1];
  EXPECT_NE(both.find("all_gather (group rank"), std::string::npos) << both;
  EXPECT_NE(both.find("(the ranks disagree on the size)"), std::string::npos) << both;
}

// Each rank copies its piece into the root's buffer, so a rank that names
// another root must fail before it writes anywhere.
TEST(InProcessTest, RanksThatDisagreeOnAGathersRootGetAnError) {
  InProcessWorld world(2, 5s);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    std::vector<char> in(8), out(rank == 0 ? 16 : 0);
    return comm.gather(in.data(), rank == 0 ? out.data() : nullptr, in.size(), rank);
  });
  EXPECT_NE(status.message().find("gives another root (the ranks disagree)"), std::string::npos)
      << status.message();
}

TEST(InProcessTest, RanksThatDisagreeOnAnAllToAllVBlockGetTheSameError) {
  InProcessWorld world(2, 5s);
  std::vector<std::string> errors(2);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    // Rank 0 sends 4 bytes to rank 1, which expects 8.
    const size_t sendBytes[2] = {4, 4}, recvBytes[2] = {rank == 0 ? 4u : 8u, 4};
    std::vector<char> in(8), out(12);
    Status result = comm.allToAllV(in.data(), sendBytes, out.data(), recvBytes);
    errors[rank] = result.message();
    return result;
  });
  EXPECT_FALSE(status.ok());
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(errors[rank], "all_to_all_v (group rank " + std::to_string(rank) +
                                " of 2): group rank 0 sends 4 bytes to group rank 1, which expects "
                                "8 (the ranks disagree on the size)");
}

TEST(InProcessTest, SumsOfOtherTypesAreRefused) {
  InProcessWorld world(1);
  std::unique_ptr<Communicator> comm = world.communicator(0);
  int8_t value = 1;
  EXPECT_EQ(comm->allReduceSum(&value, 1, DType::I8).message(),
            "all_reduce: sums of int8 are not supported (float32, float64, float16, bfloat16, "
            "int32, int64 are)");
  EXPECT_EQ(comm->broadcast(&value, 1, 1).message(),
            "broadcast: root 1 is not a rank of the 1-rank group");
  EXPECT_EQ(comm->send(&value, 1, -1).message(), "send: peer -1 is not a rank of the 1-rank group");
}

TEST(InProcessTest, KernelErrorsNameTheProblem) {
  InProcessWorld world(2, 5s);
  Status status = world.run([&](int, Communicator &comm) -> Status {
    HostTensor in(DType::F32, {2, 3}), wrong(DType::F32, {2, 3}), slice(DType::F32, {2, 3});
    EXPECT_EQ(runKernel("all_gather", &comm, {in.view()}, {wrong.view()}, intParams({{"dim", 1}}))
                  .message(),
              "all_gather: output [2, 3] does not match the input gathered from 2 ranks along "
              "dim 1; expected [2, 6]");
    EXPECT_EQ(runKernel("all_gather", &comm, {in.view()}, {wrong.view()}, intParams({{"dim", 2}}))
                  .message(),
              "all_gather: dim 2 is out of range for a rank-2 tensor");
    EXPECT_EQ(runKernel("all_slice", &comm, {in.view()}, {slice.view()}, intParams({{"dim", 1}}))
                  .message(),
              "all_slice: input [2, 3] does not split into 2 blocks along dim 1");
    EXPECT_EQ(
        runKernel("all_reduce", nullptr, {in.view()}, {wrong.view()}, intParams({})).message(),
        "all_reduce: no communicator is bound to the step (it has no mesh_axes)");
    EXPECT_EQ(runKernel("send", &comm, {in.view()}, {}, intParams({})).message(),
              "send: the parameter 'peer' is missing");
    return Status();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(InProcessTest, ManyWorldsInARowLeaveNoThreads) {
  // Each run joins its rank threads; a leak would show under ASan/TSan and
  // as a growing thread count.
  for (int i = 0; i < 50; ++i) {
    InProcessWorld world(3);
    Status status = world.run([](int rank, Communicator &comm) -> Status {
      int64_t value = rank;
      return comm.allReduceSum(&value, 1, DType::I64);
    });
    ASSERT_TRUE(status.ok()) << status.message();
  }
}

TEST(InProcessTest, RanksSpinLongerOnlyWhenEachHasACore) {
  // A rank spinning at a barrier on a core its peer needs would delay the
  // very peer it waits for: oversubscribed worlds must yield early.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  InProcessWorld fits(cores), oversubscribed(cores + 1);
  EXPECT_EQ(fits.spinInterval(), 1000us);
  EXPECT_EQ(oversubscribed.spinInterval(), 50us);
}

} // namespace
} // namespace shardc::rt::test
