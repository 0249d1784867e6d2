//===- TcpBootstrapTest.cpp - rank 0's bytes to every rank over TCP -------===//
//
// Ranks as threads on localhost: the exchange itself, ranks that start
// before rank 0 is listening, and the launch errors — a rank that never
// joins, no rank 0, ranks that disagree on the world size or share a rank —
// each a line naming both sides, within the timeout.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/TcpBootstrap.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace shardc::rt::test {
namespace {

using comm::TcpRendezvous;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Id = std::array<uint8_t, 128>;

/// A port nobody listens on right now (the kernel's pick for port 0).
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

Id idOf(uint8_t seed) {
  Id id;
  for (size_t i = 0; i < id.size(); ++i)
    id[i] = static_cast<uint8_t>(seed + 7 * i);
  return id;
}

struct Rank {
  TcpRendezvous where;
  Id id{};
  Status status;
  std::chrono::milliseconds delay{0};
};

/// Runs every rank on its own thread (each after its delay) and joins them.
void runAll(std::vector<Rank> &ranks) {
  std::vector<std::thread> threads;
  for (Rank &rank : ranks)
    threads.emplace_back([&rank] {
      std::this_thread::sleep_for(rank.delay);
      rank.status = comm::tcpBroadcast(rank.where, rank.id.data(), rank.id.size());
    });
  for (std::thread &thread : threads)
    thread.join();
}

std::vector<Rank> world(int size, int port, std::chrono::milliseconds timeout) {
  std::vector<Rank> ranks(size);
  for (int r = 0; r < size; ++r) {
    ranks[r].where = TcpRendezvous{r, size, "127.0.0.1", port, timeout};
    ranks[r].id = idOf(r == 0 ? 42 : 0);
  }
  return ranks;
}

TEST(TcpBootstrap, EveryRankGetsRankZerosBytes) {
  for (int size : {2, 3}) {
    std::vector<Rank> ranks = world(size, freePort(), 20s);
    runAll(ranks);
    for (const Rank &rank : ranks) {
      EXPECT_TRUE(rank.status.ok()) << rank.status.message();
      EXPECT_EQ(rank.id, idOf(42)) << "rank " << rank.where.rank << " of " << size;
    }
  }
}

TEST(TcpBootstrap, RanksRetryUntilRankZeroListens) {
  std::vector<Rank> ranks = world(3, freePort(), 20s);
  ranks[0].delay = 600ms; // the others connect first and are refused
  runAll(ranks);
  for (const Rank &rank : ranks) {
    EXPECT_TRUE(rank.status.ok()) << rank.status.message();
    EXPECT_EQ(rank.id, idOf(42));
  }
}

TEST(TcpBootstrap, HostNamesResolve) {
  std::vector<Rank> ranks = world(2, freePort(), 20s);
  ranks[1].where.address = "localhost";
  runAll(ranks);
  EXPECT_TRUE(ranks[1].status.ok()) << ranks[1].status.message();
  EXPECT_EQ(ranks[1].id, idOf(42));
}

TEST(TcpBootstrap, OneRankNeedsNobody) {
  Id id = idOf(1);
  EXPECT_TRUE(comm::tcpBroadcast({0, 1, "127.0.0.1", freePort(), 1s}, id.data(), id.size()).ok());
  EXPECT_EQ(id, idOf(1));
}

TEST(TcpBootstrap, RankZeroNamesTheRanksThatNeverJoined) {
  const int port = freePort();
  std::vector<Rank> ranks = world(4, port, 700ms);
  ranks.erase(ranks.begin() + 2); // rank 2 never starts
  ranks.pop_back();               // nor rank 3
  auto start = Clock::now();
  runAll(ranks);
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_TRUE(ranks[1].status.ok()) << ranks[1].status.message();
  EXPECT_EQ(ranks[0].status.message(),
            "ranks 2, 3 did not join within 0.7 s (rank 0 listened on port " +
                std::to_string(port) + ")");
}

TEST(TcpBootstrap, ARankWithoutRankZeroGivesUpAtTheTimeout) {
  const int port = freePort();
  Id id{};
  auto start = Clock::now();
  Status status = comm::tcpBroadcast({1, 2, "127.0.0.1", port, 500ms}, id.data(), id.size());
  EXPECT_LT(Clock::now() - start, 5s);
  EXPECT_EQ(status.message(), "could not reach rank 0 at 127.0.0.1:" + std::to_string(port) +
                                  " within 0.5 s (Connection refused)");
}

TEST(TcpBootstrap, RanksThatDisagreeOnTheWorldSizeBothSaySo) {
  const int port = freePort();
  std::vector<Rank> ranks = world(2, port, 10s);
  ranks[1].where.size = 3;
  runAll(ranks);
  const std::string why = "rank 1 was launched with WORLD_SIZE=3 but rank 0 with WORLD_SIZE=2";
  EXPECT_EQ(ranks[0].status.message(), why);
  EXPECT_EQ(ranks[1].status.message(),
            "rank 0 at 127.0.0.1:" + std::to_string(port) + " refused: " + why);
}

TEST(TcpBootstrap, TwoProcessesAsOneRankAreRefused) {
  std::vector<Rank> ranks = world(3, freePort(), 3s);
  ranks[2].where.rank = 1;
  ranks[2].delay = 200ms; // the first rank 1 is served, the second refused
  runAll(ranks);
  EXPECT_EQ(ranks[0].status.message(), "two processes were launched as rank 1");
  EXPECT_TRUE(ranks[1].status.ok()) << ranks[1].status.message();
  EXPECT_NE(ranks[2].status.message().find("refused: two processes were launched as rank 1"),
            std::string::npos)
      << ranks[2].status.message();
}

TEST(TcpBootstrap, BadArguments) {
  Id id{};
  EXPECT_EQ(comm::tcpBroadcast({2, 2, "127.0.0.1", 29500, 1s}, id.data(), id.size()).message(),
            "rank 2 is not a rank of a 2-rank world");
  EXPECT_EQ(comm::tcpBroadcast({0, 2, "127.0.0.1", 70000, 1s}, id.data(), id.size()).message(),
            "port 70000 is not a TCP port");
}

} // namespace
} // namespace shardc::rt::test
