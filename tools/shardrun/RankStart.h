//===- RankStart.h - what every way of starting ranks does first -*- C++ -*-===//
//
// However its ranks start (threads, MPI, NCCL), shardrun opens the artifact
// once, checks the launch, picks the device, reads the inputs (or with
// --train the data) and loads its ranks, in this order; errors that every
// rank sees alike are told apart from errors of one rank, which must end
// the whole job.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_RANKSTART_H
#define SHARDC_TOOLS_SHARDRUN_RANKSTART_H

#include "runtime/io/NamedTensor.h"
#include "runtime/session/Session.h"
#include "tools/shardrun/Cli.h"
#include "tools/shardrun/TrainingData.h"

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

namespace shardc::shardrun {

/// The session, opened once; its error is reported where the path taken
/// reports errors every rank sees.
using Opened = rt::StatusOr<rt::Session>;

/// Stops the process with one line; never returns.
using Failure = std::function<void(const std::string &)>;

/// The inputs by name, read once and shared by every rank (read-only), and
/// in the artifact's order; with --train, the data's step batches instead.
struct Inputs {
  std::vector<rt::io::NamedTensor> tensors;
  std::vector<const rt::HostTensor *> ordered;
  std::optional<TrainingData> training;
};

/// The checks and loading of this process's ranks, in one order: what all
/// ranks see alike (the layout, the launch, the inputs) goes through
/// `failEverywhere`, what only this process sees through `failAlone`.
rt::Session &start(const Options &options, Opened &opened, int launched, int firstRank, int count,
                   Inputs &inputs, const Failure &failEverywhere, const Failure &failAlone);

rt::RunOptions runOptionsOf(const Options &options);
std::chrono::milliseconds timeoutOf(const Options &options);

} // namespace shardc::shardrun

#endif
