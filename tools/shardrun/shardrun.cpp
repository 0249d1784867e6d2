//===- shardrun.cpp - run a compiled shardc artifact ----------------------===//
//
//   shardrun OUT/ --inputs in.npz [--outputs out.npz] [--warmup W] [--iters I]
//            [--threads N] [--profile] [--np N] [--comm threads|mpi|nccl]
//            [--comm-timeout S]
//   mpirun -np N shardrun OUT/ ...
//   RANK=r WORLD_SIZE=N MASTER_ADDR=host MASTER_PORT=p shardrun OUT/ ...
//
// An artifact for a mesh of N devices runs as N ranks, each with its own
// program, weights, device and executor, joined by a Communicator: as N
// threads of this process with --np N (the in-process world), or as the N
// processes of an MPI launch (detected from the launcher's environment, or
// forced with --comm mpi). Every rank gets the whole inputs; the outputs are
// replicated, and rank 0 writes them and prints the summary.
//
// A cuda artifact runs on the GPU the local rank picks (Devices.h). Its
// processes talk over NCCL (one GPU each) when an MPI launcher or a
// torchrun-style environment started them; its --np ranks share the one GPU
// and talk through the in-process world, each on its own stream.
//
// Every error is one line on stderr and exit code 1 — on every rank of an MPI
// job when all ranks see it (a wrong rank count, bad inputs), otherwise from
// the rank that failed, which then ends the job (MPI_Abort; in-process, the
// world is aborted; NCCL, the communicators are aborted) so that no rank waits
// forever. The runtime links neither MLIR nor LLVM, so this tool parses its
// own flags.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcess.h"
#include "runtime/comm/Mpi.h"
#include "runtime/comm/TcpBootstrap.h"
#include "runtime/core/Artifact.h"
#include "runtime/core/Executor.h"
#include "runtime/core/PrintableText.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/MatMul.h"
#include "runtime/io/AtomicFile.h"
#include "runtime/io/Npz.h"
#include "tools/Version.h"
#include "tools/shardrun/ClosestFlag.h"
#include "tools/shardrun/Devices.h"
#include "tools/shardrun/Launch.h"

#ifdef SHARDC_WITH_CUDA
#include "runtime/comm/Nccl.h"
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

using namespace shardc::rt;
using namespace shardc::shardrun;

namespace {

constexpr const char *kUsage =
    "usage: shardrun ARTIFACT_DIR --inputs IN.npz [--outputs OUT.npz] [--warmup W] [--iters I]\n"
    "                [--threads N] [--profile] [--np N] [--comm threads|mpi|nccl]\n"
    "                [--comm-timeout S]\n"
    "       mpirun -np N shardrun ARTIFACT_DIR ...\n"
    "       RANK=r WORLD_SIZE=N MASTER_ADDR=HOST MASTER_PORT=P shardrun ARTIFACT_DIR ...\n"
    "\n"
    "Runs a model compiled by `shardc MODEL -o ARTIFACT_DIR`.\n"
    "  --inputs IN.npz    the model's inputs by ONNX input name (numpy .npz)\n"
    "  --outputs OUT.npz  where to write the outputs by ONNX output name\n"
    "  --warmup W         untimed runs before timing (default 1)\n"
    "  --iters I          timed runs (default 1); the summary reports the median\n"
    "  --threads N        CPU threads in all (default: all cores), shared by the ranks\n"
    "  --profile          print the time per step, summed over the timed runs (rank 0)\n"
    "  --np N             run an artifact compiled for N ranks as N threads of this process\n"
    "                     (a cuda artifact's ranks share one GPU)\n"
    "  --comm threads|mpi|nccl\n"
    "                     how ranks talk: threads (default; with --np), MPI (default when\n"
    "                     mpirun or another MPI launcher started shardrun) or NCCL, one GPU\n"
    "                     per process (default for a cuda artifact under mpirun or with\n"
    "                     RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set)\n"
    "  --comm-timeout S   seconds one collective may wait for the other ranks (default 600);\n"
    "                     past it NCCL ranks abort, each printing its last collectives\n"
    "  --help             this text\n"
    "  --version          shardrun's version and the artifact version it reads\n"
    "\n"
    "Ranks enumerate the mesh row-major with the last axis fastest: on a mesh\n"
    "[dp=2, tp=2] rank 1 is (dp 0, tp 1) and rank 2 is (dp 1, tp 0).\n";

struct Options {
  std::string artifact, inputs, outputs, comm;
  int warmup = 1, iters = 1, threads = 0, np = 0;
  double commTimeout = 600;
  bool profile = false;
};

/// The error line, written at once: the ranks of an MPI job share stderr,
/// and pieces written apart interleave with theirs. Only the first error of
/// the process is written: the NCCL watchdog's thread and the main thread
/// may both see a failure.
void printError(const std::string &message) {
  static std::atomic<bool> printed{false};
  if (printed.exchange(true))
    return;
  std::string line = printableMessage("shardrun: error: " + message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

[[noreturn]] void die(const std::string &message) {
  printError(message);
  std::exit(1);
}

int parseCount(const std::string &flag, const std::string &text, int minimum) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000)
    die(flag + " '" + text + "': expected an integer >= " + std::to_string(minimum));
  return static_cast<int>(value);
}

/// The longest --comm-timeout: about 11.6 days. Far longer ones overflow
/// the clocks' deadlines (1e300 s would time out at once).
constexpr double kMaxSeconds = 1e6;

double parseSeconds(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value <= 0 || value > kMaxSeconds)
    die(flag + " '" + text + "': expected a positive number of seconds, at most 1e6");
  return value;
}

/// Every flag parseOptions takes, for "did you mean".
const std::vector<std::string> kFlags = {
    "--inputs", "--outputs", "--warmup", "--iters",        "--threads", "--np",
    "--comm",   "--profile", "--help",   "--comm-timeout", "--version"};

Options parseOptions(int argc, char **argv) {
  Options options;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    // --flag=value as well as --flag value.
    std::optional<std::string> inlineValue;
    if (size_t equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      inlineValue = arg.substr(equals + 1);
      arg = arg.substr(0, equals);
    }
    auto value = [&]() -> std::string {
      if (inlineValue)
        return *inlineValue;
      if (i + 1 >= args.size())
        die(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--version") {
      std::cout << "shardrun " SHARDC_VERSION "\nreads artifact version " << kArtifactVersion
                << "\n";
      std::exit(0);
    } else if (arg == "--inputs") {
      options.inputs = value();
    } else if (arg == "--outputs") {
      options.outputs = value();
    } else if (arg == "--warmup") {
      options.warmup = parseCount(arg, value(), 0);
    } else if (arg == "--iters") {
      options.iters = parseCount(arg, value(), 1);
    } else if (arg == "--threads") {
      options.threads = parseCount(arg, value(), 1);
    } else if (arg == "--np") {
      options.np = parseCount(arg, value(), 1);
    } else if (arg == "--comm") {
      options.comm = value();
      if (options.comm != "threads" && options.comm != "mpi" && options.comm != "nccl")
        die("--comm '" + options.comm + "': expected 'threads', 'mpi' or 'nccl'");
    } else if (arg == "--comm-timeout") {
      options.commTimeout = parseSeconds(arg, value());
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::string closest = closestFlag(arg, kFlags);
      die("unknown flag '" + arg + "'" +
          (closest.empty() ? "" : "; did you mean '" + closest + "'?") + " (see shardrun --help)");
    } else if (options.artifact.empty()) {
      options.artifact = arg;
    } else {
      die("unexpected argument '" + arg + "'; one artifact directory is expected");
    }
  }
  if (options.artifact.empty())
    die("no artifact directory given; see shardrun --help");
  if (options.inputs.empty())
    die("--inputs IN.npz is required");
  return options;
}

/// Resident set size high-water mark, from /proc (Linux).
int64_t peakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::atoll(line.c_str() + 6) * 1024;
  return 0;
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", bytes / 1e6);
  return text;
}

} // namespace

/// OpenBLAS picks its kernels when it loads, from the CPU model or from
/// OPENBLAS_CORETYPE; Debian's 0.3.21 does not know recent CPUs and falls back
/// to generic SSE3 kernels, several times slower. When that happened and the
/// user did not choose, start again with the kernels that suit the CPU.
void reexecWithSuitableBlasKernels(char **argv) {
  if (std::getenv("OPENBLAS_CORETYPE"))
    return;
  std::string better = cpu::betterBlasCore();
  if (better.empty() || setenv("OPENBLAS_CORETYPE", better.c_str(), 1) != 0)
    return;
  execv("/proc/self/exe", argv);
  // Still here: the exec failed; carry on with the generic kernels.
}

namespace {

/// What one rank measured and produced.
struct RankRun {
  std::vector<HostTensor> outputs;
  std::vector<double> seconds;
  int64_t arenaBytes = 0;
  std::vector<StepProfile> profile;
};

/// The inputs by name, read once and shared by every rank (read-only).
struct Inputs {
  std::vector<io::NamedTensor> tensors;
  std::vector<std::pair<std::string, const HostTensor *>> named() const {
    std::vector<std::pair<std::string, const HostTensor *>> given;
    for (const io::NamedTensor &input : tensors)
      given.emplace_back(input.name, &input.tensor);
    return given;
  }
};

/// Checks made before any rank starts (or, under MPI, on every rank before
/// any communication), so that every rank reports them alike. An empty
/// string when all is well.
std::string checkLaunch(const Options &options, const ArtifactLayout &layout, int launched) {
  if (layout.target != "cpu" && layout.target != "cuda")
    return options.artifact + ": compiled for target '" + layout.target +
           "'; this shardrun runs 'cpu' and 'cuda' artifacts";
  if (layout.ranks != launched)
    return "the artifact was compiled for " + layout.describe() + " but " +
           std::to_string(launched) + (launched == 1 ? " was" : " were") +
           " launched (run it with --np " + std::to_string(layout.ranks) + ", or mpirun -np " +
           std::to_string(layout.ranks) + ")";
  return "";
}

/// Prepares and runs one rank's program on its own device: warmup, then the
/// timed runs.
Status runRank(const Options &options, const Artifact &artifact,
               const std::vector<const HostTensor *> &ordered, Communicator &world,
               const DevicePlan &plan, RankRun &result) {
  auto device = openDevice(plan);
  if (!device)
    return device.status();
  auto executor = Executor::prepare(artifact, **device, &world);
  if (!executor)
    return executor.status();
  for (int i = 0; i < options.warmup; ++i)
    if (Status status = (*executor)->run(ordered, result.outputs); !status)
      return status;
  for (int i = 0; i < options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status status = (*executor)->run(ordered, result.outputs, options.profile); !status)
      return status;
    result.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  result.arenaBytes = (*executor)->arenaBytes();
  result.profile = (*executor)->profile();
  return {};
}

/// Rank 0's part at the end: the outputs and the summary. An error message,
/// or empty.
std::string finish(const Options &options, const Artifact &artifact, RankRun &run,
                   const std::string &how, const DevicePlan &plan) {
  if (!options.outputs.empty()) {
    std::vector<io::NamedView> named;
    for (size_t i = 0; i < run.outputs.size(); ++i)
      named.push_back({artifact.outputs[i].name, run.outputs[i].view()});
    if (io::Status status = io::writeNpz(options.outputs, named); !status)
      return status.error();
  }
  std::sort(run.seconds.begin(), run.seconds.end());
  double median = run.seconds[run.seconds.size() / 2];
  std::string ranks = artifact.ranks == 1 ? "1 rank" : std::to_string(artifact.ranks) + " ranks";
  if (!artifact.mesh.names.empty() && artifact.ranks > 1)
    ranks += " (mesh " + artifact.mesh.describe() + ")";
  // How the ranks talk; said of one rank too when it is NCCL, which was asked for.
  if (artifact.ranks > 1 || how.rfind("over NCCL", 0) == 0)
    ranks += " " + how;
  std::string where = plan.cuda ? " on " + plan.description
                                : ", " + std::to_string(cpu::threads()) + " thread(s)" +
                                      (artifact.ranks > 1 ? " per rank" : "");
  std::printf("shardrun: %s%s, %.3f ms/iter (median of %d), arena %s, peak RSS %s\n", ranks.c_str(),
              where.c_str(), median * 1e3, options.iters, megabytes(run.arenaBytes).c_str(),
              megabytes(peakRssBytes()).c_str());
  if (options.profile) {
    std::printf("%-5s %-18s %10s %6s  %s\n", "step", "kernel", "ms/iter", "share", "ONNX nodes");
    double total = 0;
    for (const StepProfile &step : run.profile)
      total += step.seconds;
    for (size_t i = 0; i < run.profile.size(); ++i) {
      const StepProfile &step = run.profile[i];
      std::printf("%-5zu %-18s %10.4f %5.1f%%  %s\n", i, step.kernel.c_str(),
                  step.seconds / options.iters * 1e3, total > 0 ? 100 * step.seconds / total : 0.0,
                  step.source.c_str());
    }
  }
  std::fflush(stdout);
  return "";
}

std::chrono::milliseconds timeoutOf(const Options &options) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.commTimeout * 1000)));
}

/// One rank (no --np), or --np N ranks as threads of this process.
int runAsThreads(const Options &options) {
  const int np = options.np ? options.np : 1;
  auto layout = readArtifactLayout(options.artifact);
  if (!layout)
    die(layout.status().message());
  if (std::string error = checkLaunch(options, *layout, np); !error.empty())
    die(error);
  auto plan = planDevice(*layout);
  if (!plan)
    die(plan.status().message());
  Inputs inputs;
  auto read = io::readNpz(options.inputs);
  if (!read)
    die(read.error());
  inputs.tensors = std::move(*read);
  // Every rank's files are checked before any rank starts.
  std::vector<Artifact> artifacts;
  for (int rank = 0; rank < np; ++rank) {
    auto artifact = loadArtifact(options.artifact, rank);
    if (!artifact)
      die(artifact.status().message());
    artifacts.push_back(std::move(*artifact));
  }
  std::vector<const HostTensor *> ordered;
  if (Status status = checkInputs(artifacts[0], inputs.named(), ordered); !status)
    die(options.inputs + ": " + status.message());

  // The cores are shared: each rank's kernels (and GEMMs) get a share.
  cpu::setThreads(options.threads);
  if (np > 1)
    cpu::setThreads(std::max(1, cpu::threads() / np));
  comm::InProcessWorld world(np, timeoutOf(options));
  std::vector<RankRun> runs(np);
  Status status = world.run([&](int rank, Communicator &communicator) {
    return runRank(options, artifacts[rank], ordered, communicator, *plan, runs[rank]);
  });
  if (!status)
    die(status.message());
  if (std::string error = finish(options, artifacts[0], runs[0], "as threads", *plan);
      !error.empty())
    die(error);
  return 0;
}

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

/// What one launched rank needs before it communicates.
struct RankStart {
  DevicePlan plan;
  Inputs inputs;
  Artifact artifact;
  std::vector<const HostTensor *> ordered; ///< into inputs, in the artifact's order
};

/// Stops the process with one line; never returns.
using Failure = std::function<void(const std::string &)>;

/// The checks and loading every rank of a multi-process launch does, in one
/// order: what all ranks see alike (the layout, the launch, the inputs) goes
/// through `failEverywhere`, what only this rank sees through `failAlone`.
RankStart startRank(const Options &options, int rank, int size, const Failure &failEverywhere,
                    const Failure &failAlone) {
  auto layout = readArtifactLayout(options.artifact);
  if (!layout)
    failEverywhere(layout.status().message());
  if (std::string error = checkLaunch(options, *layout, size); !error.empty())
    failEverywhere(error);
  auto plan = planDevice(*layout);
  if (!plan)
    failAlone(plan.status().message());
  RankStart start;
  start.plan = *plan;
  auto read = io::readNpz(options.inputs);
  if (!read)
    failEverywhere(read.error());
  start.inputs.tensors = std::move(*read);
  auto artifact = loadArtifact(options.artifact, rank);
  if (!artifact)
    failAlone(artifact.status().message());
  start.artifact = std::move(*artifact);
  if (Status status = checkInputs(start.artifact, start.inputs.named(), start.ordered); !status)
    failEverywhere(options.inputs + ": " + status.message());
  return start;
}

/// One rank per process of an MPI job.
int runUnderMpi(const Options &options, int &argc, char **&argv) {
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
  RankStart start = startRank(options, rank, session->size(), failEverywhere, failAlone);

  cpu::setThreads(options.threads);
  if (!options.threads && session->localSize() > 1)
    cpu::setThreads(std::max(1, cpu::threads() / session->localSize()));
  session->setTimeout(timeoutOf(options), [](const std::string &message) {
    printError(message);
    comm::MpiSession::abortJob(1);
  });
  RankRun run;
  {
    auto world = session->world();
    if (!world)
      failAlone(world.status().message());
    if (Status status = runRank(options, start.artifact, start.ordered, **world, start.plan, run);
        !status)
      failAlone(status.message());
  } // the communicators go before MPI_Finalize
  if (rank == 0)
    if (std::string error = finish(options, start.artifact, run, "under MPI", start.plan);
        !error.empty())
      failAlone(error);
  session.reset();
  return 0;
}

/// One rank per process and GPU, talking over NCCL: started by an MPI
/// launcher (the NCCL id goes out with MPI_Bcast) or torchrun-style (over
/// TCP from rank 0 at MASTER_ADDR:MASTER_PORT).
int runWithNccl(const Options &options, int &argc, char **&argv) {
#ifndef SHARDC_WITH_CUDA
  (void)options;
  (void)argc;
  (void)argv;
  die("--comm nccl needs the CUDA backend, and this shardrun was built without it (configure "
      "with -DSHARDC_CUDA=ON)");
#else
  if (auto layout = readArtifactLayout(options.artifact); layout && layout->target != "cuda")
    die("--comm nccl runs cuda artifacts; this one targets '" + layout->target +
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
  RankStart start = startRank(options, rank, size, failEverywhere, failAlone);

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
  ncclOptions.device = start.plan.ordinal;
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
  if (Status status = runRank(options, start.artifact, start.ordered, *world, start.plan, run);
      !status)
    failAlone(status.message());
  world.reset(); // ncclCommFinalize, then ncclCommDestroy
  if (rank == 0)
    if (std::string error =
            finish(options, start.artifact, run, "over NCCL " + comm::ncclVersion(), start.plan);
        !error.empty())
      failAlone(error);
  mpiWorld.reset();
  session.reset();
  return 0;
#endif
}

/// Whether the artifact is a cuda one (false for one that cannot be read:
/// the path chosen then reports why).
bool isCudaArtifact(const std::string &directory) {
  auto layout = readArtifactLayout(directory);
  return layout && layout->target == "cuda";
}

} // namespace

int main(int argc, char **argv) {
  // Past `ulimit -f` writing the outputs fails with EFBIG, reported as one
  // line, instead of SIGXFSZ killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  reexecWithSuitableBlasKernels(argv);
  Options options = parseOptions(argc, argv);
  // A bad --outputs path is refused before anything runs, not after.
  if (!options.outputs.empty())
    if (io::Expected<std::string> outputs = io::replaceableFile(options.outputs); !outputs)
      die(outputs.error());
  const bool launched = comm::launchedByMpi();
  const bool mpi = options.comm == "mpi" || (options.comm.empty() && launched);
  if (mpi && options.np)
    die("--np runs the ranks as threads of one process; it cannot be combined with an MPI "
        "launch (use mpirun -np N alone)");
  if (options.comm == "nccl" && options.np)
    die("--np runs the ranks as threads of one process, sharing one GPU, and NCCL needs one "
        "process per GPU (drop --np, or use --comm threads)");
  // NCCL by default for a cuda artifact whose ranks are processes.
  const bool nccl =
      options.comm == "nccl" || (options.comm.empty() && !options.np &&
                                 (launched || std::getenv("WORLD_SIZE") || std::getenv("RANK")) &&
                                 isCudaArtifact(options.artifact));
  if (nccl)
    return runWithNccl(options, argc, argv);
  return mpi ? runUnderMpi(options, argc, argv) : runAsThreads(options);
}
