//===- Launch.h - what the launcher's environment says ----------*- C++ -*-===//
//
// The runtime learns where it runs from the variables launchers set:
//  - the device: the rank's index among the ranks of its node — LOCAL_RANK
//    (torchrun), OMPI_COMM_WORLD_LOCAL_RANK (OpenMPI), SLURM_LOCALID (Slurm),
//    MPI_LOCALRANKID (MPICH) — never the global rank, which is past the
//    node's GPUs on every node but the first;
//  - a torchrun-style launch without MPI: RANK, WORLD_SIZE, MASTER_ADDR and
//    MASTER_PORT, from which the NCCL id is shared over TCP.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_LAUNCH_H
#define SHARDC_RUNTIME_SESSION_LAUNCH_H

#include "runtime/core/Status.h"

#include <optional>
#include <string>

namespace shardc::rt {

struct LocalRank {
  int value = 0;
  /// The variable it came from ("LOCAL_RANK=1"); empty when none is set.
  std::string source;
};
/// The first of the variables above that is set; 0 when none is. An error
/// for a value that is not a non-negative integer.
StatusOr<LocalRank> localRank();

struct TorchrunLaunch {
  int rank = 0, size = 1;
  std::string address;
  int port = 29500;
};
/// From RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (29500, torchrun's
/// default, when unset), when WORLD_SIZE or RANK is set; none otherwise.
/// Errors name the variable that is missing or malformed.
StatusOr<std::optional<TorchrunLaunch>> torchrunLaunch();

} // namespace shardc::rt

#endif
