//===- MpiTest.cpp - the MPI communicator, under mpirun -------------------===//
//
//   mpirun -np N shardc-mpi-tests            the collectives of
//                                            CollectiveChecks.h on MPI
//   mpirun -np 2 shardc-mpi-tests --hang     rank 1 never joins a collective:
//                                            the watchdog must end the job
//   mpirun -np 2 shardc-mpi-tests --stalled-receiver
//                                            rank 1 never receives: rank 0's
//                                            sends must stop and time out
//
// Every rank runs every test in the same order (the collectives must match);
// only rank 0 prints gtest's progress, and every rank exits non-zero when a
// test failed on any rank. ctest runs it with 2 and 3 ranks
// (test/unit/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "CollectiveChecks.h"

#include "runtime/comm/Mpi.h"
#include "runtime/core/Mesh.h"

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

namespace shardc::rt::test {
namespace {

Communicator *gWorld = nullptr;

const std::vector<DType> kSummable = {DType::F32,  DType::F64, DType::F16,
                                      DType::BF16, DType::I32, DType::I64};

TEST(MpiTest, AllReduce) {
  for (DType dtype : kSummable)
    for (int64_t count : {0, 1, 3, 17, 1000})
      checkAllReduce(*gWorld, dtype, count);
}

TEST(MpiTest, ReduceScatter) {
  for (DType dtype : kSummable)
    for (int64_t count : {1, 5, 64})
      checkReduceScatter(*gWorld, dtype, count);
}

TEST(MpiTest, AllGatherAndAllToAll) {
  for (DType dtype : {DType::F32, DType::I8, DType::Bool, DType::F16, DType::I64})
    for (int64_t count : {0, 1, 7}) {
      checkAllGather(*gWorld, dtype, count);
      checkAllGatherRows(*gWorld, dtype, 3, count);
      checkAllToAll(*gWorld, dtype, count);
    }
}

TEST(MpiTest, AllToAllVWithUnequalAndEmptyBlocks) {
  for (DType dtype : {DType::F32, DType::I8, DType::F16, DType::I64})
    for (int seed = 0; seed < 4; ++seed)
      checkAllToAllV(*gWorld, dtype, seed);
}

TEST(MpiTest, BroadcastFromEveryRoot) {
  for (int root = 0; root < gWorld->size(); ++root)
    checkBroadcast(*gWorld, DType::F32, 33, root);
}

TEST(MpiTest, GatherOntoEveryRoot) {
  for (int root = 0; root < gWorld->size(); ++root)
    for (bool pointToPoint : {false, true})
      checkGather(*gWorld, 33, root, pointToPoint);
}

TEST(MpiTest, SendAndReceive) {
  checkSendRecvRing(*gWorld, 10);
  checkSendRecvRing(*gWorld, 0);
  // 4 MB: past MPI's eager limit, so a blocking send would deadlock the ring
  // and a send buffer freed early would arrive as garbage.
  checkSendRecvRing(*gWorld, 1 << 20);
}

TEST(MpiTest, CpuCollectiveKernels) {
  checkAllKernels(*gWorld, {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64,
                            DType::I8, DType::Bool});
}

TEST(MpiTest, Split) { checkSplit(*gWorld); }

TEST(MpiTest, GroupsOfAMesh) {
  // [dp = n / tp, tp] with tp = 2 where n is even, else [dp = n, tp = 1].
  const int n = gWorld->size(), tpSize = n % 2 == 0 ? 2 : 1;
  const MeshShape mesh({"dp", "tp"}, {n / tpSize, tpSize});
  const std::vector<int64_t> coords = mesh.coordinates(gWorld->rank());
  for (const std::vector<std::string> &axes :
       std::vector<std::vector<std::string>>{{"tp"}, {"dp"}, {"dp", "tp"}}) {
    auto colorAndKey = mesh.groupColorAndKey(gWorld->rank(), axes);
    ASSERT_TRUE(colorAndKey.ok());
    auto group = gWorld->split(colorAndKey->first, colorAndKey->second);
    ASSERT_TRUE(group.ok()) << group.status().message();
    int64_t sum = gWorld->rank();
    ASSERT_TRUE(succeeded((*group)->allReduceSum(&sum, 1, DType::I64)));
    int64_t want = 0;
    for (int64_t r = 0; r < n; ++r) {
      std::vector<int64_t> other = mesh.coordinates(r);
      bool same = true;
      for (size_t axis = 0; axis < 2; ++axis)
        if (std::find(axes.begin(), axes.end(), mesh.names[axis]) == axes.end())
          same = same && other[axis] == coords[axis];
      if (same)
        want += r;
    }
    EXPECT_EQ(sum, want) << axes.size() << " axes from " << axes[0];
  }
}

/// Arms a 0.5 s watchdog that ends the job, and keeps rank 1 away from rank
/// 0 for a minute: true on rank 1 (it has slept), false on rank 0.
bool armWatchdogAndStallRankOne(comm::MpiSession &session, Communicator &world) {
  session.setTimeout(std::chrono::milliseconds(500), [](const std::string &message) {
    std::cerr << "shardc-mpi-tests: " << message << std::endl;
    comm::MpiSession::abortJob(1);
  });
  if (world.rank() != 1)
    return false;
  std::this_thread::sleep_for(std::chrono::seconds(60));
  return true;
}

/// Rank 1 never joins rank 0's all-reduce; the watchdog must end the job.
int hang(comm::MpiSession &session, Communicator &world) {
  if (armWatchdogAndStallRankOne(session, world))
    return 0;
  float value = 1;
  (void)world.allReduceSum(&value, 1, DType::F32);
  std::cerr << "shardc-mpi-tests: the all-reduce returned" << std::endl;
  return 0;
}

/// Rank 1 never receives what rank 0 sends: once the sends in flight
/// reach their bound (runtime/comm/Mpi.cpp) a send waits, and the watchdog
/// ends the job.
int stalledReceiver(comm::MpiSession &session, Communicator &world) {
  if (armWatchdogAndStallRankOne(session, world))
    return 0;
  const char byte = 0;
  for (int i = 0; i < 1000; ++i)
    (void)world.send(&byte, 1, 1);
  std::cerr << "shardc-mpi-tests: the sends returned" << std::endl;
  return 0;
}

} // namespace
} // namespace shardc::rt::test

int main(int argc, char **argv) {
  using namespace shardc::rt;
  ::testing::InitGoogleTest(&argc, argv);
  auto started = comm::MpiSession::start(argc, argv);
  if (!started) {
    std::cerr << "shardc-mpi-tests: " << started.status().message() << "\n";
    return 1;
  }
  std::unique_ptr<comm::MpiSession> session = std::move(*started);
  int result = 0;
  {
    auto world = session->world();
    if (!world) {
      std::cerr << "shardc-mpi-tests: " << world.status().message() << "\n";
      return 1;
    }
    if (argc > 1 && std::strcmp(argv[1], "--hang") == 0)
      return test::hang(*session, **world);
    if (argc > 1 && std::strcmp(argv[1], "--stalled-receiver") == 0)
      return test::stalledReceiver(*session, **world);
    // A rank that stops answering fails the job instead of hanging ctest.
    session->setTimeout(std::chrono::seconds(60), [](const std::string &message) {
      std::cerr << "shardc-mpi-tests: " << message << std::endl;
      comm::MpiSession::abortJob(1);
    });
    test::gWorld = world->get();
    if (session->rank() != 0) {
      auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    int failed = RUN_ALL_TESTS() != 0;
    // Every rank reports the job's outcome (a failure on any rank).
    int32_t anyFailed = failed;
    if (!(*world)->allReduceSum(&anyFailed, 1, DType::I32).ok())
      anyFailed = 1;
    if (anyFailed && !failed)
      std::cerr << "shardc-mpi-tests: rank " << session->rank()
                << " passed, but a test failed on another rank\n";
    if (session->rank() == 0)
      std::cout << "shardc-mpi-tests: " << session->size() << " ranks, "
                << (anyFailed ? "FAILED" : "all passed") << std::endl;
    result = anyFailed ? 1 : 0;
  } // the communicators go before MPI_Finalize
  session.reset();
  return result;
}
