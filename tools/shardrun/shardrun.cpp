//===- shardrun.cpp - run a compiled shardc artifact ----------------------===//
//
//   shardrun OUT/ --inputs in.npz [--outputs out.npz] [--warmup W] [--iters I]
//            [--threads N] [--profile]
//
// Every error is one line on stderr and exit code 1. The runtime links
// neither MLIR nor LLVM, so this tool parses its own flags.
//
//===----------------------------------------------------------------------===//
#include "runtime/core/Artifact.h"
#include "runtime/core/Executor.h"
#include "runtime/cpu/CpuBackend.h"
#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/MatMul.h"
#include "runtime/io/Npz.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

using namespace shardc::rt;

namespace {

constexpr const char *kUsage =
    "usage: shardrun ARTIFACT_DIR --inputs IN.npz [--outputs OUT.npz] [--warmup W] [--iters I]\n"
    "                [--threads N] [--profile]\n"
    "\n"
    "Runs a model compiled by `shardc MODEL -o ARTIFACT_DIR`.\n"
    "  --inputs IN.npz    the model's inputs by ONNX input name (numpy .npz)\n"
    "  --outputs OUT.npz  where to write the outputs by ONNX output name\n"
    "  --warmup W         untimed runs before timing (default 1)\n"
    "  --iters I          timed runs (default 1); the summary reports the median\n"
    "  --threads N        CPU threads (default: all cores)\n"
    "  --profile          print the time per step, summed over the timed runs\n"
    "  --help             this text\n";

struct Options {
  std::string artifact, inputs, outputs;
  int warmup = 1, iters = 1, threads = 0;
  bool profile = false;
};

[[noreturn]] void die(const std::string &message) {
  std::cerr << "shardrun: error: " << message << "\n";
  std::exit(1);
}

int parseCount(const std::string &flag, const std::string &text, int minimum) {
  char *end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < minimum || value > 1000000)
    die(flag + " '" + text + "': expected an integer >= " + std::to_string(minimum));
  return static_cast<int>(value);
}

Options parseOptions(int argc, char **argv) {
  Options options;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size())
        die(arg + " needs a value");
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
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
    } else if (arg == "--profile") {
      options.profile = true;
    } else if (!arg.empty() && arg[0] == '-') {
      die("unknown flag '" + arg + "'; see shardrun --help");
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

int main(int argc, char **argv) {
  reexecWithSuitableBlasKernels(argv);
  Options options = parseOptions(argc, argv);
  auto artifact = loadArtifact(options.artifact, /*rank=*/0);
  if (!artifact)
    die(artifact.status().message());
  if (artifact->target != "cpu")
    die(options.artifact + ": compiled for target '" + artifact->target +
        "'; this shardrun runs 'cpu' artifacts");
  auto inputs = io::readNpz(options.inputs);
  if (!inputs)
    die(inputs.error());
  std::vector<std::pair<std::string, const HostTensor *>> given;
  for (const io::NamedTensor &input : *inputs)
    given.emplace_back(input.name, &input.tensor);
  std::vector<const HostTensor *> ordered;
  if (Status status = checkInputs(*artifact, given, ordered); !status)
    die(options.inputs + ": " + status.message());

  cpu::setThreads(options.threads);
  cpu::CpuDevice device;
  auto executor = Executor::prepare(*artifact, device);
  if (!executor)
    die(executor.status().message());
  std::vector<HostTensor> outputs;
  for (int i = 0; i < options.warmup; ++i)
    if (Status status = (*executor)->run(ordered, outputs); !status)
      die(status.message());
  std::vector<double> seconds;
  for (int i = 0; i < options.iters; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status status = (*executor)->run(ordered, outputs, options.profile); !status)
      die(status.message());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (!options.outputs.empty()) {
    std::vector<io::NamedView> named;
    for (size_t i = 0; i < outputs.size(); ++i)
      named.push_back({artifact->outputs[i].name, outputs[i].view()});
    if (io::Status status = io::writeNpz(options.outputs, named); !status)
      die(status.error());
  }
  std::sort(seconds.begin(), seconds.end());
  double median = seconds[seconds.size() / 2];
  std::printf("shardrun: %d rank, %d thread(s), %.3f ms/iter (median of %d), arena %s, peak RSS %s\n",
              artifact->ranks, cpu::threads(), median * 1e3, options.iters,
              megabytes((*executor)->arenaBytes()).c_str(), megabytes(peakRssBytes()).c_str());
  if (options.profile) {
    std::printf("%-5s %-18s %10s %6s  %s\n", "step", "kernel", "ms/iter", "share", "ONNX nodes");
    double total = 0;
    for (const StepProfile &step : (*executor)->profile())
      total += step.seconds;
    for (size_t i = 0; i < (*executor)->profile().size(); ++i) {
      const StepProfile &step = (*executor)->profile()[i];
      std::printf("%-5zu %-18s %10.4f %5.1f%%  %s\n", i, step.kernel.c_str(),
                  step.seconds / options.iters * 1e3, total > 0 ? 100 * step.seconds / total : 0.0,
                  step.source.c_str());
    }
  }
  return 0;
}
