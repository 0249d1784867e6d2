//===- Cli.h - shardrun's flags and its one-line errors ---------*- C++ -*-===//
//
// The runtime links neither MLIR nor LLVM, so shardrun parses its own flags.
// Every error is one line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_CLI_H
#define SHARDC_TOOLS_SHARDRUN_CLI_H

#include <cstdint>
#include <string>

namespace shardc::shardrun {

struct Options {
  std::string artifact, inputs, outputs, comm, trace;
  int warmup = 1, iters = 1, threads = 0, np = 0;
  double commTimeout = 600;
  bool profile = false;
  /// --train: a training artifact's steps on --data's batches (TrainLoop.h).
  bool train = false;
  std::string data, log, save, resume, exportOnnx;
  int64_t steps = 0, saveEvery = 0;
};

/// The flags; --help and --version print and exit, a bad flag is an error.
Options parseOptions(int argc, char **argv);

/// The error line, written at once: the ranks of an MPI job share stderr,
/// and pieces written apart interleave with theirs. Only the first error of
/// the process is written: the NCCL watchdog's thread and the main thread
/// may both see a failure.
void printError(const std::string &message);

[[noreturn]] void die(const std::string &message);

} // namespace shardc::shardrun

#endif
