//===- Cli.cpp - shardrun's flags and its one-line errors -----------------===//
#include "tools/shardrun/Cli.h"

#include "runtime/core/Artifact.h"
#include "runtime/core/PrintableText.h"
#include "runtime/cpu/CpuBackend.h"
#include "tools/Version.h"
#include "tools/shardrun/ClosestFlag.h"
#include "tools/shardrun/FlagArgs.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <vector>

namespace shardc::shardrun {
namespace {

constexpr const char *kUsage =
    "usage: shardrun ARTIFACT_DIR --inputs IN.npz [--outputs OUT.npz] [--warmup W] [--iters I]\n"
    "                [--threads N] [--profile] [--np N] [--comm threads|mpi|nccl]\n"
    "                [--comm-timeout S] [--trace FILE.json]\n"
    "       shardrun ARTIFACT_DIR --train --data DATA.npz --steps N [--log LOSS.jsonl]\n"
    "                [--save DIR [--save-every K]] [--resume DIR] [--export-onnx OUT.onnx]\n"
    "                [--threads N] [--np N] [--comm threads|mpi] [--comm-timeout S]\n"
    "       mpirun -np N shardrun ARTIFACT_DIR ...\n"
    "       RANK=r WORLD_SIZE=N MASTER_ADDR=HOST MASTER_PORT=P shardrun ARTIFACT_DIR ...\n"
    "\n"
    "Runs a model compiled by `shardc MODEL -o ARTIFACT_DIR`.\n"
    "  --inputs IN.npz    the model's inputs by ONNX input name (numpy .npz)\n"
    "  --outputs OUT.npz  where to write the outputs by ONNX output name\n"
    "  --warmup W         untimed runs before timing (default 1)\n"
    "  --iters I          timed runs (default 1); the summary reports the median\n"
    "  --threads N        CPU threads in all (default: all cores, at most 1024), shared by the "
    "ranks\n"
    "  --profile          print the time per step, summed over the timed runs (output rank),\n"
    "                     then per rank its compute, collectives, time waiting for peers and\n"
    "                     idle share (a pipeline rank's bubble)\n"
    "  --np N             run an artifact compiled for N ranks as N threads of this process\n"
    "                     (a cuda artifact's ranks share one GPU)\n"
    "  --comm threads|mpi|nccl\n"
    "                     how ranks talk: threads (default; with --np), MPI (default when\n"
    "                     mpirun or another MPI launcher started shardrun) or NCCL, one GPU\n"
    "                     per process (default for a cuda artifact under mpirun or with\n"
    "                     RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set)\n"
    "  --comm-timeout S   seconds one collective may wait for the other ranks (default 600);\n"
    "                     past it NCCL ranks abort, each printing its last collectives\n"
    "  --trace FILE.json  write a timeline of the timed runs (Chrome trace events; open it in\n"
    "                     ui.perfetto.dev): a row per rank, an event per pipeline action\n"
    "                     (forward, send, recv) or per run (per step with --profile). Ranks\n"
    "                     run as threads share FILE.json; under mpirun (or NCCL) each rank\n"
    "                     writes its own, FILE.rank<r>.json\n"
    "\n"
    "Training (an artifact compiled with `shardc --train`; each run is one step):\n"
    "  --train            run the artifact's training step --steps times\n"
    "  --data DATA.npz    every input of the step by name; a batch input (the manifest's\n"
    "                     training.batch_inputs, labels, target) stacked on dim 0: step i\n"
    "                     takes rows [(i-1)*B, i*B), B its dim 0 in the artifact; any other\n"
    "                     input whole, for every step. Every rank gets the whole step batch\n"
    "  --steps N          the last step to run (resuming at step k runs k+1 to N); prints\n"
    "                     `step I loss X grad_norm G` per step, the loss before its update,\n"
    "                     and stops at a loss that is nan or inf\n"
    "  --log LOSS.jsonl   also write {\"step\": I, \"loss\": X, \"grad_norm\": G, \"ms\": T} per\n"
    "                     step (T its milliseconds); appended to when resuming\n"
    "  --save DIR         save a checkpoint at the end: DIR/checkpoint.json and every rank's\n"
    "                     states (parameters, optimizer state) as DIR/rank<r>.safetensors,\n"
    "                     written beside DIR and renamed into place; an existing DIR is\n"
    "                     replaced only if it is a checkpoint holding nothing else\n"
    "  --save-every K     with --save, also save after every K-th step\n"
    "  --resume DIR       start from the checkpoint DIR (same model, mesh and training setup)\n"
    "  --export-onnx OUT.onnx\n"
    "                     after the last step, write the source model with every trained\n"
    "                     weight (tied copies too) as OUT.onnx, for onnxruntime; written\n"
    "                     atomically; an existing OUT.onnx is replaced only if shardrun\n"
    "                     exported it\n"
    "\n"
    "  --help             this text\n"
    "  --version          shardrun's version and the artifact version it reads\n"
    "\n"
    "Ranks enumerate the mesh row-major with the last axis fastest: on a mesh\n"
    "[dp=2, tp=2] rank 1 is (dp 0, tp 1) and rank 2 is (dp 1, tp 0). The output rank\n"
    "writes the outputs and the summary: rank 0, or a pipeline artifact's output_rank\n"
    "(the first rank of its last stage).\n";

int parseCount(const std::string &flag, const std::string &text, int minimum,
               long maximum = 1000000) {
  std::optional<long> value = integerIn(text, minimum, maximum);
  if (!value)
    die(flag + " '" + text + "': expected an integer >= " + std::to_string(minimum));
  return static_cast<int>(*value);
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
    "--inputs",  "--outputs", "--warmup",     "--iters",  "--threads",
    "--np",      "--comm",    "--profile",    "--help",   "--comm-timeout",
    "--version", "--trace",   "--train",      "--data",   "--steps",
    "--log",     "--save",    "--save-every", "--resume", "--export-onnx"};

/// The flags of inference runs only and of training only: each kind is
/// refused with the other.
const std::vector<std::string> kInferenceFlags = {"--inputs", "--outputs", "--warmup",
                                                  "--iters",  "--profile", "--trace"};
const std::vector<std::string> kTrainingFlags = {
    "--data", "--steps", "--log", "--save", "--save-every", "--resume", "--export-onnx"};

} // namespace

void printError(const std::string &message) {
  static std::atomic<bool> printed{false};
  if (printed.exchange(true))
    return;
  std::string line = rt::printableMessage("shardrun: error: " + message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

[[noreturn]] void die(const std::string &message) {
  printError(message);
  std::exit(1);
}

Options parseOptions(int argc, char **argv) {
  Options options;
  FlagArgs args(argc, argv, die);
  std::set<std::string> given;
  while (args.next()) {
    const std::string arg = args.arg();
    given.insert(arg);
    auto value = [&] { return args.value(); };
    // An empty path would read as the flag not given: nothing written.
    auto path = [&] {
      std::string text = args.value();
      if (text.empty())
        die(arg + " '': expected a path");
      return text;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--version") {
      std::cout << "shardrun " SHARDC_VERSION "\nreads artifact version " << rt::kArtifactVersion
                << "\n";
      std::exit(0);
    } else if (arg == "--inputs") {
      options.inputs = path();
    } else if (arg == "--outputs") {
      options.outputs = path();
    } else if (arg == "--warmup") {
      options.warmup = parseCount(arg, value(), 0);
    } else if (arg == "--iters") {
      options.iters = parseCount(arg, value(), 1);
    } else if (arg == "--threads") {
      const std::string text = value();
      options.threads = parseCount(arg, text, 1);
      if (options.threads > rt::cpu::kMaxThreads)
        die("--threads '" + text + "': at most " + std::to_string(rt::cpu::kMaxThreads) +
            " (threads in all, shared by the ranks)");
    } else if (arg == "--np") {
      options.np = parseCount(arg, value(), 1);
    } else if (arg == "--comm") {
      options.comm = value();
      if (options.comm != "threads" && options.comm != "mpi" && options.comm != "nccl")
        die("--comm '" + options.comm + "': expected 'threads', 'mpi' or 'nccl'");
    } else if (arg == "--comm-timeout") {
      options.commTimeout = parseSeconds(arg, value());
    } else if (arg == "--trace") {
      options.trace = path();
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (arg == "--train") {
      options.train = true;
    } else if (arg == "--data") {
      options.data = path();
    } else if (arg == "--steps") {
      options.steps = parseCount(arg, value(), 1, 1000000000);
    } else if (arg == "--log") {
      options.log = path();
    } else if (arg == "--save") {
      options.save = path();
    } else if (arg == "--save-every") {
      options.saveEvery = parseCount(arg, value(), 1, 1000000000);
    } else if (arg == "--resume") {
      options.resume = path();
    } else if (arg == "--export-onnx") {
      options.exportOnnx = path();
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
  if (options.train) {
    for (const std::string &flag : kInferenceFlags)
      if (given.count(flag))
        die(flag + " is for inference runs; it cannot be combined with --train (which reads "
                   "each step's batch from --data)");
    if (options.data.empty())
      die("--train needs --data DATA.npz");
    if (!options.steps)
      die("--train needs --steps N");
  } else {
    for (const std::string &flag : kTrainingFlags)
      if (given.count(flag))
        die(flag + " needs --train");
    if (options.inputs.empty())
      die("--inputs IN.npz is required");
  }
  if (options.saveEvery && options.save.empty())
    die("--save-every needs --save DIR");
  return options;
}

} // namespace shardc::shardrun
