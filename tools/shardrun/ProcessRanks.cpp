//===- ProcessRanks.cpp - one rank per process: MPI and NCCL --------------===//
//
// Errors every rank sees alike end each rank cleanly; an error of one rank
// ends the whole job, or the others would wait for it forever.
//
//===----------------------------------------------------------------------===//
#include "tools/shardrun/ProcessRanks.h"

#include "runtime/comm/Mpi.h"
#include "runtime/comm/TcpBootstrap.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/session/Launch.h"
#include "tools/shardrun/Summary.h"
#include "tools/shardrun/TraceFile.h"
#include "tools/shardrun/TrainLoop.h"

#ifdef SHARDC_WITH_CUDA
#include "runtime/comm/Nccl.h"
#endif

#include <algorithm>
#include <cstdlib>

namespace shardc::shardrun {

using namespace rt;

namespace {

/// The rank the launcher says this process is, where it says so.
std::string checkLauncherRank(int rank) {
  for (const char *variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "RANK", "SLURM_PROCID"}) {
    const char *value = std::getenv(variable);
    if (value && *value && std::to_string(rank) != value)
      return std::string(variable) + "=" + value + " but MPI made this process rank " +
             std::to_string(rank);
  }
  return "";
}

} // namespace

int runUnderMpi(const Options &options, Opened &opened, int &argc, char **&argv) {
  auto started = comm::MpiSession::start(argc, argv);
  if (!started)
    die(started.status().message());
  std::unique_ptr<comm::MpiSession> session = std::move(*started);
  // Errors every rank sees alike end each rank cleanly; an error of one rank
  // ends the whole job, or the others would wait for it forever.
  auto failEverywhere = [&](const std::string &message) {
    printError(message);
    session.reset(); // MPI_Finalize
    std::exit(1);
  };
  auto failAlone = [&](const std::string &message) {
    printError((session->size() > 1 ? "rank " + std::to_string(session->rank()) + ": " : "") +
               message);
    comm::MpiSession::abortJob(1);
  };
  const int rank = session->rank();
  if (std::string error = checkLauncherRank(rank); !error.empty())
    failAlone(error);
  Inputs inputs;
  Session &artifact =
      start(options, opened, session->size(), rank, 1, inputs, failEverywhere, failAlone);

  cpu::setThreads(options.threads);
  if (!options.threads && session->localSize() > 1)
    cpu::setThreads(std::max(1, cpu::threads() / session->localSize()));
  session->setTimeout(timeoutOf(options), [](const std::string &message) {
    printError(message);
    comm::MpiSession::abortJob(1);
  });
  if (options.train) {
    {
      auto world = session->world();
      if (!world)
        failAlone(world.status().message());
      auto training = Training::prepare(artifact, **world);
      if (!training)
        failAlone(training.message());
      trainLoop(options, artifact, **training, *inputs.training, rank == artifact.outputRank(),
                "under MPI", failEverywhere, failAlone);
    } // the ranks and communicators go before MPI_Finalize
    session.reset();
    return 0;
  }
  RankRun run;
  std::vector<RankTimes> ranks;
  {
    auto world = session->world();
    if (!world)
      failAlone(world.status().message());
    if (Status status = artifact.runRank(rank, **world, inputs.ordered, runOptionsOf(options), run);
        !status)
      failAlone(status.message());
    // Every rank has the same options: all of them take part, or none.
    if (options.profile) {
      auto gathered = gatherRankTimes(rankTimesOf(run.profile, run.seconds), **world);
      if (!gathered)
        failAlone(gathered.status().message());
      ranks = std::move(*gathered);
    }
  } // the communicators go before MPI_Finalize
  if (!options.trace.empty())
    if (std::string error = writeTrace(traceFileOfRank(options.trace, rank), {{rank, &run.trace}});
        !error.empty())
      failAlone(error);
  if (rank == artifact.outputRank())
    if (std::string error = finish(options, artifact, run, "under MPI", &ranks); !error.empty())
      failAlone(error);
  session.reset();
  return 0;
}

int runWithNccl(const Options &options, Opened &opened, int &argc, char **&argv) {
#ifndef SHARDC_WITH_CUDA
  (void)options;
  (void)opened;
  (void)argc;
  (void)argv;
  die("--comm nccl needs the CUDA backend, and this shardrun was built without it (configure "
      "with -DSHARDC_CUDA=ON)");
#else
  if (opened && opened->layout().target != "cuda")
    die("--comm nccl runs cuda artifacts; this one targets '" + opened->layout().target +
        "' (use --comm mpi)");
  auto torchrun = torchrunLaunch();
  if (!torchrun)
    die(torchrun.status().message());
  std::unique_ptr<comm::MpiSession> session;
  int rank = 0, size = 1;
  if (comm::launchedByMpi()) {
    auto started = comm::MpiSession::start(argc, argv);
    if (!started)
      die(started.status().message());
    session = std::move(*started);
    rank = session->rank();
    size = session->size();
  } else if (*torchrun) {
    rank = (*torchrun)->rank;
    size = (*torchrun)->size;
  } else {
    die("--comm nccl runs one process per GPU: start shardrun with mpirun, or set RANK, "
        "WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun-style)");
  }
  std::unique_ptr<Communicator> world, mpiWorld;
  // As under MPI: errors every rank sees end each rank; one rank's error
  // ends the job — MPI_Abort, or without MPI the NCCL communicators are
  // aborted, and the other ranks fail at once or at their timeout.
  auto failEverywhere = [&](const std::string &message) {
    printError(message);
    mpiWorld.reset();
    session.reset();
    std::exit(1);
  };
  auto failAlone = [&](const std::string &message) {
    printError((size > 1 ? "rank " + std::to_string(rank) + ": " : "") + message);
    if (session)
      comm::MpiSession::abortJob(1);
    if (world)
      world->abort(message);
    std::_Exit(1);
  };
  if (session)
    if (std::string error = checkLauncherRank(rank); !error.empty())
      failAlone(error);
  Inputs inputs;
  Session &artifact = start(options, opened, size, rank, 1, inputs, failEverywhere, failAlone);

  comm::ShareBytes share;
  if (session) {
    auto made = session->world();
    if (!made)
      failAlone(made.status().message());
    mpiWorld = std::move(*made);
    share = comm::shareThrough(*mpiWorld);
  } else {
    comm::TcpRendezvous where{rank, size, (*torchrun)->address, (*torchrun)->port,
                              timeoutOf(options)};
    share = [where](void *data, size_t bytes) { return comm::tcpBroadcast(where, data, bytes); };
  }
  comm::NcclOptions ncclOptions;
  ncclOptions.rank = rank;
  ncclOptions.size = size;
  ncclOptions.device = artifact.device().ordinal;
  ncclOptions.timeout = timeoutOf(options);
  // The watchdog's line, already prefixed with the rank; nothing this
  // process has queued can be trusted after an abort.
  ncclOptions.onFailure = [](const std::string &message) {
    printError(message);
    std::_Exit(1);
  };
  auto joined = comm::joinNcclWorld(ncclOptions, share);
  if (!joined)
    failAlone(joined.status().message());
  world = std::move(*joined);
  RankRun run;
  if (Status status = artifact.runRank(rank, *world, inputs.ordered, runOptionsOf(options), run);
      !status)
    failAlone(status.message());
  world.reset(); // ncclCommFinalize, then ncclCommDestroy
  if (!options.trace.empty())
    if (std::string error = writeTrace(traceFileOfRank(options.trace, rank), {{rank, &run.trace}});
        !error.empty())
      failAlone(error);
  if (rank == artifact.outputRank())
    if (std::string error = finish(options, artifact, run, "over NCCL " + comm::ncclVersion());
        !error.empty())
      failAlone(error);
  mpiWorld.reset();
  session.reset();
  return 0;
#endif
}

} // namespace shardc::shardrun
