//===- CollectivesBench.cpp - collectives against the machine's bandwidth -===//
//
// `shardc-bench-collectives [MiB] [repeats]`: all-reduce of a float32 buffer
// (25 MiB by default, the size of GPT-2's logits) between ranks, median
// seconds over the repeats, beside what the machine allows:
// - run directly: 2 ranks as threads of one process (InProcessWorld), against
//   one thread's memcpy of the same bytes (the shared-memory bound);
// - under mpirun: shardc's MPI communicator against MPI_Allreduce itself on
//   the same buffer, the two taking turns within each repeat.
// Bandwidth is reported as bytes / seconds ("algorithm bandwidth").
//
// Then all-to-all-v (MoE's dispatch and combine) of the same bytes per rank
// and of 1/8 and 1/64 of them, in unequal blocks (member j gets a share
// proportional to j + 1, as experts of uneven load do): in-process against
// memcpy, under mpirun shardc's against MPI_Alltoallv with the same counts.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcess.h"
#include "runtime/comm/Mpi.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

using namespace shardc::rt;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

/// Median seconds of each of `runs` over `repeats` rounds, after one
/// warm-up round. Within a round the runs take turns, so a slow spell of a
/// shared machine falls on all of them alike and their ratio stays honest.
std::vector<double> timeMedians(int repeats, const std::vector<std::function<void()>> &runs) {
  for (const auto &run : runs)
    run();
  std::vector<std::vector<double>> samples(runs.size());
  for (int i = 0; i < repeats; ++i)
    for (size_t r = 0; r < runs.size(); ++r) {
      Clock::time_point start = Clock::now();
      runs[r]();
      samples[r].push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  std::vector<double> medians;
  for (std::vector<double> &taken : samples)
    medians.push_back(median(std::move(taken)));
  return medians;
}

double timeMedian(int repeats, const std::function<void()> &run) {
  return timeMedians(repeats, {run})[0];
}

void report(const char *what, size_t bytes, double seconds) {
  std::printf("%-34s %9.3f ms  %7.2f GB/s\n", what, seconds * 1e3, bytes / seconds / 1e9);
}

/// The all-to-all-v sizes of `bytes` per rank over n ranks: block j (to
/// rank j) in proportion to j + 1, so every rank receives blocks of its own
/// one size from everyone.
struct Blocks {
  std::vector<size_t> send, receive;
  size_t sent = 0, received = 0;
};
Blocks unequalBlocks(size_t bytes, int n, int rank) {
  Blocks blocks;
  const size_t shares = size_t(n) * (n + 1) / 2;
  for (int j = 0; j < n; ++j) {
    blocks.send.push_back(bytes / shares * (j + 1));
    blocks.receive.push_back(bytes / shares * (rank + 1));
    blocks.sent += blocks.send.back();
    blocks.received += blocks.receive.back();
  }
  return blocks;
}

/// The all-to-all-v sizes the benchmark runs: `bytes`, 1/8 and 1/64 of it.
std::vector<size_t> allToAllVSizes(size_t bytes) { return {bytes / 64, bytes / 8, bytes}; }

int inProcess(size_t count, int repeats) {
  const size_t bytes = count * sizeof(float);
  std::vector<float> from(count, 1.f), to(count);
  double copy = timeMedian(repeats, [&] { std::memcpy(to.data(), from.data(), bytes); });
  report("memcpy (1 thread)", bytes, copy);

  comm::InProcessWorld world(2);
  std::vector<std::vector<double>> samples(2);
  Status status = world.run([&](int rank, Communicator &comm) -> Status {
    std::vector<float> data(count, float(rank + 1));
    for (int i = 0; i <= repeats; ++i) {
      Clock::time_point start = Clock::now();
      if (Status s = comm.allReduceSum(data.data(), count, DType::F32); !s)
        return s;
      if (i > 0) // the first call is the warm-up
        samples[rank].push_back(std::chrono::duration<double>(Clock::now() - start).count());
      // Keep the values from growing without bound: back to 1 and 2.
      std::fill(data.begin(), data.end(), float(rank + 1));
    }
    return data[0] == float(rank + 1) ? Status() : Status::error("reset failed");
  });
  if (!status) {
    std::fprintf(stderr, "all_reduce failed: %s\n", status.message().c_str());
    return 1;
  }
  double allReduce = median(samples[0]);
  report("in-process all_reduce (2 threads)", bytes, allReduce);
  std::printf("all_reduce / memcpy bandwidth: %.2f\n", copy / allReduce);

  for (size_t size : allToAllVSizes(bytes)) {
    std::vector<double> exchanged;
    status = world.run([&](int rank, Communicator &comm) -> Status {
      Blocks blocks = unequalBlocks(size, comm.size(), rank);
      std::vector<char> in(blocks.sent), out(blocks.received);
      Status result;
      double seconds = timeMedian(repeats, [&] {
        if (Status s = comm.allToAllV(in.data(), blocks.send.data(), out.data(),
                                      blocks.receive.data());
            !s)
          result = s;
      });
      if (rank == 0)
        exchanged.push_back(seconds);
      return result;
    });
    if (!status) {
      std::fprintf(stderr, "all_to_all_v failed: %s\n", status.message().c_str());
      return 1;
    }
    char what[64];
    std::snprintf(what, sizeof what, "in-process all_to_all_v %.2f MiB", size / 1048576.0);
    report(what, size, exchanged[0]);
  }
  return 0;
}

int underMpi(int &argc, char **&argv, size_t count, int repeats) {
  auto session = comm::MpiSession::start(argc, argv);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().message().c_str());
    return 1;
  }
  auto world = (*session)->world();
  if (!world.ok()) {
    std::fprintf(stderr, "%s\n", world.status().message().c_str());
    return 1;
  }
  const size_t bytes = count * sizeof(float);
  std::vector<float> data(count, 1.f);
  Status failed;
  std::vector<double> medians = timeMedians(
      repeats,
      {[&] {
         if (Status status = (*world)->allReduceSum(data.data(), count, DType::F32); !status)
           failed = status;
       },
       [&] {
         MPI_Allreduce(MPI_IN_PLACE, data.data(), int(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
       }});
  if (!failed) {
    std::fprintf(stderr, "all_reduce failed: %s\n", failed.message().c_str());
    return 1;
  }
  const double ours = medians[0], theirs = medians[1];
  if ((*session)->rank() == 0) {
    report("shardc MPI all_reduce", bytes, ours);
    report("MPI_Allreduce", bytes, theirs);
    std::printf("shardc / MPI_Allreduce time: %.2f\n", ours / theirs);
  }

  const int n = (*session)->size(), rank = (*session)->rank();
  for (size_t size : allToAllVSizes(bytes)) {
    Blocks blocks = unequalBlocks(size, n, rank);
    std::vector<char> in(blocks.sent), out(blocks.received);
    std::vector<int> sendCounts, sendOffsets, receiveCounts, receiveOffsets;
    for (int j = 0, sent = 0, received = 0; j < n; ++j) {
      sendCounts.push_back(int(blocks.send[j]));
      sendOffsets.push_back(sent);
      receiveCounts.push_back(int(blocks.receive[j]));
      receiveOffsets.push_back(received);
      sent += sendCounts.back();
      received += receiveCounts.back();
    }
    std::vector<double> medians = timeMedians(
        repeats,
        {[&] {
           if (Status status = (*world)->allToAllV(in.data(), blocks.send.data(), out.data(),
                                                   blocks.receive.data());
               !status)
             failed = status;
         },
         [&] {
           MPI_Alltoallv(in.data(), sendCounts.data(), sendOffsets.data(), MPI_BYTE, out.data(),
                         receiveCounts.data(), receiveOffsets.data(), MPI_BYTE, MPI_COMM_WORLD);
         }});
    if (!failed) {
      std::fprintf(stderr, "all_to_all_v failed: %s\n", failed.message().c_str());
      return 1;
    }
    const double shardc = medians[0], mpi = medians[1];
    if (rank == 0) {
      char what[64];
      std::snprintf(what, sizeof what, "shardc MPI all_to_all_v %.2f MiB", size / 1048576.0);
      report(what, size, shardc);
      std::snprintf(what, sizeof what, "MPI_Alltoallv %.2f MiB", size / 1048576.0);
      report(what, size, mpi);
    }
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const double mib = argc > 1 ? std::atof(argv[1]) : 25.0;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  if (mib <= 0 || repeats < 1) {
    std::fprintf(stderr, "usage: shardc-bench-collectives [MiB > 0] [repeats >= 1]\n");
    return 1;
  }
  const size_t count = size_t(mib * 1024 * 1024) / sizeof(float);
  return comm::launchedByMpi() ? underMpi(argc, argv, count, repeats) : inProcess(count, repeats);
}
