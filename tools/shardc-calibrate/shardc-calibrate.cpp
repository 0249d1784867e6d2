//===- shardc-calibrate.cpp - a device file measured on this machine -------===//
//
//   shardc-calibrate -o cpu.json [--ranks N] [--threads T]
//   mpirun -np N shardc-calibrate -o cpu.json [--threads T]
//   shardc model.onnx --tp 2 --device cpu.json -o out/
//
// The cost model prices plans with a device's FLOP/s, memory bandwidth and
// collective latency and bandwidth; its presets are GPUs. This measures the
// CPU ranks of this machine the way shardrun runs them (N ranks as threads
// of one process, or the MPI job's ranks, each with T kernel threads, all
// at once) and writes those figures as a device file (README: Device
// description), so that CPU plans and reports are priced by what the
// runtime really gets. The collective figures are fitted to the model's
// ring formula (CollectiveFit.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/InProcess.h"
#include "runtime/comm/Mpi.h"
#include "runtime/core/PrintableText.h"
#include "runtime/cpu/Threading.h"
#include "runtime/io/AtomicFile.h"
#include "tools/Version.h"
#include "tools/shardc-calibrate/Measure.h"
#include "tools/shardrun/ClosestFlag.h"
#include "tools/shardrun/FlagArgs.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace {

using namespace shardc;

const char *kUsage =
    "usage: shardc-calibrate -o FILE.json [--ranks N] [--threads T] [--mib S] [--repeats R]\n"
    "       mpirun -np N shardc-calibrate -o FILE.json [--threads T] ...\n"
    "\n"
    "Measures what N CPU ranks of this machine achieve, run together as shardrun runs\n"
    "them, and writes it as a device file for shardc --device (README: Device description):\n"
    "peak_flops_32 and _16 (the CPU linear kernel's FLOP/s at [128, 768] x [768, 3072]),\n"
    "memory_bandwidth (memcpy, bytes read and written), intra_node_latency, _bandwidth and\n"
    "collective_launch (all-reduces of 4 KiB and S MiB and an all-gather of 4 KiB, fitted\n"
    "to the cost model's ring formula), devices_per_node N and memory_bytes (this machine's\n"
    "memory over N). The inter-node figures are not measured: they are set to the\n"
    "intra-node ones.\n"
    "\n"
    "  -o FILE.json    where to write the device file (replaced whole, or left as it was)\n"
    "  --ranks N       ranks as threads of this process (default 2); under mpirun the\n"
    "                  job's ranks, and --ranks is refused\n"
    "  --threads T     kernel threads per rank (default: cores / ranks, at least 1)\n"
    "  --mib S         the large all-reduce, in MiB (default 25: GPT-2's logits)\n"
    "  --repeats R     timed repeats of each measurement, medians taken (default 10)\n"
    "  --help          this text\n"
    "  --version       shardc-calibrate's version\n";

struct Options {
  std::string output;
  std::optional<int> ranks;
  int threads = 0;
  double mib = 25;
  int repeats = 10;
};

[[noreturn]] void die(const std::string &message) {
  std::string line = rt::printableMessage("shardc-calibrate: error: " + message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::exit(1);
}

int parseCount(const std::string &flag, const std::string &text, int minimum, int maximum) {
  std::optional<long> value = shardrun::integerIn(text, minimum, maximum);
  if (!value)
    die(flag + " '" + text + "': expected an integer from " + std::to_string(minimum) + " to " +
        std::to_string(maximum));
  return int(*value);
}

Options parseOptions(int argc, char **argv) {
  const std::vector<std::string> flags = {"-o",     "--ranks", "--threads", "--mib",
                                          "--repeats", "--help", "--version"};
  Options options;
  shardrun::FlagArgs args(argc, argv, die);
  while (args.next()) {
    const std::string arg = args.arg();
    auto value = [&] { return args.value(); };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--version") {
      std::cout << "shardc-calibrate " SHARDC_VERSION "\n";
      std::exit(0);
    } else if (arg == "-o") {
      options.output = value();
    } else if (arg == "--ranks") {
      options.ranks = parseCount(arg, value(), 2, 1024);
    } else if (arg == "--threads") {
      options.threads = parseCount(arg, value(), 1, 4096);
    } else if (arg == "--repeats") {
      options.repeats = parseCount(arg, value(), 1, 100000);
    } else if (arg == "--mib") {
      const std::string text = value();
      char *end = nullptr;
      options.mib = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !std::isfinite(options.mib) || options.mib < 1 ||
          options.mib > 4096)
        die("--mib '" + text + "': expected a number of MiB from 1 to 4096");
    } else {
      std::string closest = rt::printableMessage(shardrun::closestFlag(arg, flags));
      die("unknown " + std::string(arg[0] == '-' ? "flag" : "argument") + " '" + arg + "'" +
          (closest.empty() ? "" : "; did you mean '" + closest + "'?") +
          " (see shardc-calibrate --help)");
    }
  }
  if (options.output.empty())
    die("-o FILE.json is required");
  // Before measuring: a path that cannot be written fails at once.
  if (auto target = rt::io::replaceableFile(options.output); !target)
    die(target.status().message());
  return options;
}

/// The device file: the figures of rank 0, as the cost model reads them.
std::string deviceJson(const calibrate::RankFigures &figures, const calibrate::LinkFit &link,
                       int ranks, int threads, const char *how) {
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  std::ostringstream json;
  json.precision(6);
  json << "{\n"
       << "  \"base\": \"h100\",\n"
       << "  \"name\": \"cpu: " << ranks << " ranks x " << threads << " threads (" << how
       << "), measured by shardc-calibrate\",\n"
       << "  \"peak_flops_16\": " << figures.gemmFlops << ",\n"
       << "  \"peak_flops_32\": " << figures.gemmFlops << ",\n"
       << "  \"memory_bandwidth\": " << figures.memoryBandwidth << ",\n"
       << "  \"memory_bytes\": " << std::floor(memory / ranks) << ",\n"
       << "  \"devices_per_node\": " << ranks << ",\n"
       << "  \"intra_node_latency\": " << link.latencySeconds << ",\n"
       << "  \"intra_node_bandwidth\": " << link.bytesPerSecond << ",\n"
       << "  \"inter_node_latency\": " << link.latencySeconds << ",\n"
       << "  \"inter_node_bandwidth\": " << link.bytesPerSecond << ",\n"
       << "  \"collective_launch\": " << link.launchSeconds << ",\n"
       // The rates above are achieved ones: no further share is lost.
       << "  \"matmul_efficiency\": 1,\n"
       << "  \"multiprocessors\": 0,\n"
       << "  \"attention_efficiency\": 1,\n"
       << "  \"memory_efficiency\": 1\n"
       << "}\n";
  return json.str();
}

/// Fits, prints and writes what rank 0 measured.
int finish(const Options &options, const calibrate::RankFigures &figures, int ranks,
           int threads, const char *how) {
  calibrate::LinkFit link = calibrate::fitRing(ranks, figures.smallAllReduce,
                                               figures.largeAllReduce, figures.smallAllGather);
  if (!link.error.empty())
    die(link.error);
  std::printf("shardc-calibrate: %d ranks x %d threads (%s), medians of %d\n", ranks, threads, how,
              options.repeats);
  std::printf("  GEMM [128, 768] x [768, 3072]: %.1f GFLOP/s per rank\n", figures.gemmFlops / 1e9);
  std::printf("  memcpy 64 MiB: %.2f GB/s read + written per rank\n", figures.memoryBandwidth / 1e9);
  std::printf("  all_reduce 4 KiB %.1f us, %.1f MiB %.3f ms; all_gather 4 KiB %.1f us\n",
              figures.smallAllReduce.seconds * 1e6, figures.largeAllReduce.bytes / 1048576,
              figures.largeAllReduce.seconds * 1e3, figures.smallAllGather.seconds * 1e6);
  std::printf("  fitted: bandwidth %.2f GB/s, latency %.2f us, launch %.2f us%s\n",
              link.bytesPerSecond / 1e9, link.latencySeconds * 1e6, link.launchSeconds * 1e6,
              link.clamped.empty() ? "" : (" (" + link.clamped + " below zero: raised)").c_str());
  auto file = rt::io::AtomicFile::create(options.output);
  if (!file)
    die(file.status().message());
  if (rt::Status status = file->write(deviceJson(figures, link, ranks, threads, how)); !status)
    die(status.message());
  if (rt::Status status = file->commit(); !status)
    die(status.message());
  std::printf("  wrote %s\n", options.output.c_str());
  return 0;
}

int threadsFor(const Options &options, int ranks) {
  if (options.threads)
    return options.threads;
  return std::max(1, int(std::thread::hardware_concurrency()) / ranks);
}

int underMpi(int &argc, char **&argv, const Options &options) {
  auto session = rt::comm::MpiSession::start(argc, argv);
  if (!session)
    die(session.status().message());
  auto world = (*session)->world();
  if (!world)
    die(world.status().message());
  const int ranks = (*world)->size();
  if (ranks < 2)
    die("collectives need at least 2 ranks: run under mpirun -np 2 or more");
  const int threads = threadsFor(options, ranks);
  rt::cpu::setNumThreads(threads);
  auto figures = calibrate::measureRank(**world, size_t(options.mib * 1048576), options.repeats);
  if (!figures)
    die(figures.status().message());
  return (*world)->rank() == 0 ? finish(options, *figures, ranks, threads, "MPI") : 0;
}

int inProcess(const Options &options) {
  const int ranks = options.ranks.value_or(2);
  const int threads = threadsFor(options, ranks);
  rt::cpu::setNumThreads(threads);
  rt::comm::InProcessWorld world(ranks);
  calibrate::RankFigures figures;
  rt::Status status = world.run([&](int rank, rt::Communicator &comm) -> rt::Status {
    auto mine = calibrate::measureRank(comm, size_t(options.mib * 1048576), options.repeats);
    if (!mine)
      return mine.status();
    if (rank == 0)
      figures = *mine;
    return {};
  });
  if (!status)
    die(status.message());
  return finish(options, figures, ranks, threads, "threads");
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  if (rt::comm::launchedByMpi()) {
    if (options.ranks)
      die("--ranks is for ranks as threads; under mpirun the job's ranks are measured");
    return underMpi(argc, argv, options);
  }
  return inProcess(options);
}
