//===- TcpBootstrap.h - rank 0's bytes to every rank over TCP ---*- C++ -*-===//
//
// Without MPI (a torchrun-style launch: RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT) the NCCL unique id still has to reach every rank from the one
// that made it. This is the smallest exchange that does it: rank 0 listens on
// MASTER_PORT and answers each rank that connects with its bytes; the others
// connect to MASTER_ADDR:MASTER_PORT, retrying while rank 0 is not up yet,
// until the timeout. Each connection starts with a header (magic, rank,
// world size, byte count) so that ranks launched with different world sizes
// or a stray client fail with a line naming both sides instead of sharing a
// wrong id. No NCCL, no CUDA: it is tested on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_TCPBOOTSTRAP_H
#define SHARDC_RUNTIME_COMM_TCPBOOTSTRAP_H

#include "runtime/core/Status.h"

#include <chrono>
#include <cstddef>
#include <string>

namespace shardc::rt::comm {

struct TcpRendezvous {
  int rank = 0, size = 1;
  /// Where rank 0 listens (rank 0 itself listens on every interface).
  std::string address = "127.0.0.1";
  int port = 29500;
  /// How long rank 0 waits for all ranks, and a rank for rank 0.
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
};

/// Collective over the rendezvous' ranks: rank 0's `bytes` bytes at `data`
/// become every rank's. Rank 0 returns once every other rank has them.
/// Errors do not name the rank that reports them (the caller does).
Status tcpBroadcast(const TcpRendezvous &where, void *data, size_t bytes);

} // namespace shardc::rt::comm

#endif
