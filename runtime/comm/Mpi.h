//===- Mpi.h - the Communicator on MPI --------------------------*- C++ -*-===//
//
// One rank per process under `mpirun` (OpenMPI) or another MPI launcher. Only
// this library (ShardcRuntimeMpi) includes mpi.h: the core runtime and the
// kernels see the Communicator interface alone.
//
// The collectives map one to one onto MPI's (Allreduce, Allgather,
// Reduce_scatter_block, Alltoall, Alltoallv, Bcast, Send/Recv; split is
// MPI_Comm_split). F16 and BF16 sums are widened to float, reduced as
// MPI_FLOAT and rounded once, as the in-process communicator does. MPI errors
// are returned (MPI_ERRORS_RETURN), not fatal. MPI itself never times out, so
// a watchdog thread measures every collective and calls a handler (which ends
// the job) when one runs past the timeout; a send waits (and so times out)
// when too many of its peer's are unreceived.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_COMM_MPI_H
#define SHARDC_RUNTIME_COMM_MPI_H

#include "runtime/core/Communicator.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace shardc::rt::comm {

/// Whether an MPI launcher started this process: OMPI_COMM_WORLD_SIZE
/// (OpenMPI), PMI_SIZE (MPICH, Slurm's PMI) or PMIX_RANK (PMIx) is set.
bool launchedByMpi();

class MpiSession {
public:
  /// MPI_Init_thread (once per process). `argc`/`argv` are MPI's to edit.
  static StatusOr<std::unique_ptr<MpiSession>> start(int &argc, char **&argv);
  /// MPI_Finalize; every communicator from world() must be gone by then.
  ~MpiSession();
  MpiSession(const MpiSession &) = delete;
  MpiSession &operator=(const MpiSession &) = delete;

  /// In MPI_COMM_WORLD.
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Ranks of the job on this node (for a fair share of the cores).
  int localSize() const { return localSize_; }

  /// A communicator over every rank (MPI_COMM_WORLD duplicated).
  StatusOr<std::unique_ptr<Communicator>> world();

  /// From now on a collective or point-to-point call (of any communicator
  /// made here) that takes longer than `timeout` calls `onTimeout` with a
  /// one-line message, on the watchdog's thread; it should end the job
  /// (print, then abortJob). A zero timeout disarms it.
  void setTimeout(std::chrono::milliseconds timeout,
                  std::function<void(const std::string &message)> onTimeout);

  /// MPI_Abort(MPI_COMM_WORLD, code): ends every rank of the job.
  [[noreturn]] static void abortJob(int code);

  struct Watchdog;

private:
  MpiSession() = default;
  int rank_ = 0, size_ = 1, localSize_ = 1;
  std::shared_ptr<Watchdog> watchdog_;
};

} // namespace shardc::rt::comm

#endif
