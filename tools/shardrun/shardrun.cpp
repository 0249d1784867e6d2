//===- shardrun.cpp - run a compiled shardc artifact ----------------------===//
//
//   shardrun OUT/ --inputs in.npz [--outputs out.npz] [--warmup W] [--iters I]
//            [--threads N] [--profile] [--np N] [--comm threads|mpi|nccl]
//            [--comm-timeout S]
//   shardrun OUT/ --train --data data.npz --steps N [--log loss.jsonl]
//            [--save DIR [--save-every K]] [--resume DIR]
//   mpirun -np N shardrun OUT/ ...
//   RANK=r WORLD_SIZE=N MASTER_ADDR=host MASTER_PORT=p shardrun OUT/ ...
//
// An artifact for a mesh of N devices runs as N ranks, each with its own
// program, weights, device and executor, joined by a Communicator: as N
// threads of this process with --np N (the in-process world), or as the N
// processes of an MPI launch (detected from the launcher's environment, or
// forced with --comm mpi). Every rank gets the whole inputs; the outputs are
// whole on the output rank (rank 0, or a pipeline's output_rank), which
// writes them and prints the summary. --trace writes a timeline
// (TraceFile.h). With --train the artifact's training step runs once per
// step on the data's batches (TrainLoop.h).
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
// forever. The work is the runtime's (runtime/session/Session.h); this tool
// chooses how the ranks start and reports.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/Mpi.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/io/AtomicFile.h"
#include "runtime/io/StagedDirectory.h"
#include "tools/shardrun/ProcessRanks.h"
#include "tools/shardrun/RankStart.h"
#include "tools/shardrun/Summary.h"
#include "tools/shardrun/TraceFile.h"
#include "tools/shardrun/TrainLoop.h"

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <vector>

using namespace shardc::rt;
using namespace shardc::shardrun;

namespace {

/// One rank (no --np), or --np N ranks as threads of this process.
int runAsThreads(const Options &options, Opened &opened) {
  const int np = options.np ? options.np : 1;
  Inputs inputs;
  Session &session = start(options, opened, np, 0, np, inputs, die, die);
  // The cores are shared: each rank's kernels (and GEMMs) get a share.
  cpu::setThreads(options.threads);
  if (np > 1)
    cpu::setThreads(std::max(1, cpu::threads() / np));
  if (options.train) {
    auto training = Training::prepare(session, timeoutOf(options));
    if (!training)
      die(training.message());
    trainLoop(options, session, **training, *inputs.training, true, "as threads", die, die);
    return 0;
  }
  std::vector<RankRun> runs;
  if (Status status =
          session.runAsThreads(inputs.ordered, runOptionsOf(options), timeoutOf(options), runs);
      !status)
    die(status.message());
  if (!options.trace.empty()) {
    std::vector<RankEvents> events;
    for (size_t rank = 0; rank < runs.size(); ++rank)
      events.push_back({static_cast<int>(rank), &runs[rank].trace});
    if (std::string error = writeTrace(options.trace, events); !error.empty())
      die(error);
  }
  std::vector<RankTimes> ranks;
  for (const RankRun &run : runs)
    ranks.push_back(rankTimesOf(run.profile, run.seconds));
  if (std::string error =
          finish(options, session, runs[session.outputRank()], "as threads", &ranks);
      !error.empty())
    die(error);
  return 0;
}

/// The folder of the file `path` (which may not exist yet), symbolic links
/// resolved, ending in "/"; none when it does not resolve.
std::optional<std::string> realFolderOf(const std::string &path) {
  char resolved[PATH_MAX];
  const size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (!::realpath(parent.c_str(), resolved))
    return std::nullopt;
  std::string folder = resolved;
  return folder.back() == '/' ? folder : folder + "/";
}

/// Whether the file `path` (which may not exist yet) would lie in the folder
/// `folder` or below it, symbolic links resolved (the file's own is not: a
/// link inside the folder is replaced where it lies).
bool liesInFolder(const std::string &path, const std::string &folder) {
  std::optional<std::string> root = realFolderOf(folder + "/x");
  std::optional<std::string> inside = realFolderOf(path);
  return root && inside && inside->rfind(*root, 0) == 0;
}

/// `path` with its symlinks, "." and ".." resolved (its folder's only when
/// the file does not exist yet): two spellings of one file give one string.
std::string resolvedPath(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved))
    return resolved;
  std::optional<std::string> folder = realFolderOf(path);
  const size_t slash = path.rfind('/');
  return folder ? *folder + path.substr(slash == std::string::npos ? 0 : slash + 1) : path;
}

} // namespace

int main(int argc, char **argv) {
  // Past `ulimit -f` writing the outputs fails with EFBIG, reported as one
  // line, instead of SIGXFSZ killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  Options options = parseOptions(argc, argv);
  // A bad --outputs path is refused before anything runs, not after.
  for (const std::string &file : {options.outputs, options.trace, options.log})
    if (!file.empty())
      if (StatusOr<std::string> writable = io::replaceableFile(file); !writable)
        die(writable.message());
  // What the flags that write name: two naming one file (or one naming a
  // file in the folder --save replaces) would keep only what was written last.
  const std::vector<std::pair<std::string, const std::string *>> written = {
      {"--outputs", &options.outputs},
      {"--trace", &options.trace},
      {"--log", &options.log},
      {"--export-onnx", &options.exportOnnx},
      {"--save", &options.save}};
  for (size_t i = 0; i < written.size(); ++i)
    for (size_t j = i + 1; j < written.size(); ++j) {
      const auto &[flag, file] = written[i];
      const auto &[otherFlag, other] = written[j];
      if (file->empty() || other->empty())
        continue;
      if (resolvedPath(*file) == resolvedPath(*other))
        die(flag + " '" + *file + "' and " + otherFlag + " '" + *other +
            "' name the same file; give each its own");
      if (other == &options.save && liesInFolder(*file, options.save))
        die(flag + " '" + *file + "': is inside the folder '" + options.save +
            "' that --save replaces; write it elsewhere");
    }
  // What shardrun writes never replaces a file of the artifact it runs (its
  // manifest, a program, the embedded model an export starts from).
  for (const auto &[flag, file] : written)
    if (file != &options.save && !file->empty() && liesInFolder(*file, options.artifact))
      die(flag + " '" + *file + "': is inside the artifact folder '" + options.artifact +
          "' being run; write it elsewhere");
  if (!options.save.empty())
    if (auto checked = io::checkFolderDestination(options.save, checkReplaceableCheckpoint);
        !checked)
      die("--save " + checked.message());
  Opened opened = Session::open(options.artifact);
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
                                 opened && opened->layout().target == "cuda");
  if (nccl && options.train)
    die("--train over NCCL is not supported yet; run the ranks under MPI with --comm mpi, or as "
        "threads with --np");
  if (nccl)
    return runWithNccl(options, opened, argc, argv);
  return mpi ? runUnderMpi(options, opened, argc, argv) : runAsThreads(options, opened);
}
