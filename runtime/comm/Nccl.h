//===- Nccl.h - the Communicator on NCCL, one GPU per rank ------*- C++ -*-===//
//
// One rank per process and GPU (NCCL refuses two ranks on one GPU: ranks
// sharing a GPU run in-process instead, see runtime/comm/InProcess.h). Only
// this library (ShardcRuntimeNccl, built with SHARDC_CUDA) includes nccl.h.
//
// Set-up, after nccl-tests: rank 0 makes NCCL's unique id and a ShareBytes
// function gives it to the others — MPI_Bcast under mpirun (the broadcast of
// an MPI host communicator), or runtime/comm/TcpBootstrap from
// RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT. Communicators are non-blocking
// (ncclConfig_t::blocking = 0), so no NCCL call can hang the calling thread:
// every call returns at once and the rank waits for "ready" with a deadline.
// Groups per mesh axis come from ncclCommSplit.
//
// Failure, after PyTorch's ProcessGroupNCCL watchdog: one thread per world
// polls ncclCommGetAsyncError on every communicator and CUDA events around
// every collective. An NCCL error, or a collective that has been running for
// longer than the timeout (another rank died or never joined), aborts every
// communicator of the world (ncclCommAbort, never Destroy) and calls the
// failure handler once with one line: what failed, then the last collectives
// this rank issued and how far each got. Every surviving rank writes its own
// line. On a clean exit each communicator is finalized (ncclCommFinalize),
// then destroyed.
//
// The buffers are device memory; calls enqueue on the stream of the last
// setStream() (Communicator.h). A send copies its bytes and is issued with
// the next receive or collective of the group, or at flush() (see
// Communicator::flush): NCCL's sends block the GPU until the receive is
// posted, so sends issued eagerly would deadlock a ring of sends-then-receives.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_NCCL_H
#define SHARDC_RUNTIME_COMM_NCCL_H

#include "runtime/core/Communicator.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace shardc::rt::comm {

/// The size of NCCL's unique id (NCCL_UNIQUE_ID_BYTES).
constexpr size_t kNcclIdBytes = 128;

/// Collective: rank 0's `bytes` bytes at `data` become every rank's.
using ShareBytes = std::function<Status(void *data, size_t bytes)>;

struct NcclOptions {
  int rank = 0, size = 1;
  /// This rank's CUDA device (an ordinal among the visible devices).
  int device = 0;
  /// How long the set-up, or one collective once the GPU reached it, may
  /// take before the world is aborted.
  std::chrono::milliseconds timeout = std::chrono::minutes(10);
  /// How many of the last collectives the failure line lists.
  size_t history = 8;
  /// Called once, on the watchdog's thread, with the one-line failure after
  /// every communicator of the world was aborted. It should end the process
  /// (work already on the stream may have been cut short); if it returns,
  /// every later call fails with the same line.
  std::function<void(const std::string &message)> onFailure;
};

/// This rank's communicator over the whole world (collective: every rank
/// calls it). Groups split from it share its watchdog. Set-up errors (no
/// such device, a rank that does not join within the timeout) are returned.
StatusOr<std::unique_ptr<Communicator>> joinNcclWorld(const NcclOptions &options,
                                                      const ShareBytes &share);

/// Shares through a host communicator of the same ranks (its broadcast from
/// rank 0: MPI_Bcast for the MPI one).
ShareBytes shareThrough(Communicator &host);

/// "2.28.3": the NCCL the process runs with.
std::string ncclVersion();

} // namespace shardc::rt::comm

#endif
