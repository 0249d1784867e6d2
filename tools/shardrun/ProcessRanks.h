//===- ProcessRanks.h - one rank per process: MPI and NCCL -------*- C++ -*-===//
#ifndef SHARDC_TOOLS_SHARDRUN_PROCESSRANKS_H
#define SHARDC_TOOLS_SHARDRUN_PROCESSRANKS_H

#include "tools/shardrun/RankStart.h"

namespace shardc::shardrun {

/// One rank per process of an MPI job.
int runUnderMpi(const Options &options, Opened &opened, int &argc, char **&argv);

/// One rank per process and GPU, talking over NCCL: started by an MPI
/// launcher (the NCCL id goes out with MPI_Bcast) or torchrun-style (over
/// TCP from rank 0 at MASTER_ADDR:MASTER_PORT).
int runWithNccl(const Options &options, Opened &opened, int &argc, char **&argv);

} // namespace shardc::shardrun

#endif
