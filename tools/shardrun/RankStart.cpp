//===- RankStart.cpp - what every way of starting ranks does first --------===//
#include "tools/shardrun/RankStart.h"

#include "runtime/io/Npz.h"
#include "runtime/session/Training.h"

#include <cmath>

namespace shardc::shardrun {

using namespace rt;

Session &start(const Options &options, Opened &opened, int launched, int firstRank, int count,
               Inputs &inputs, const Failure &failEverywhere, const Failure &failAlone) {
  if (!opened)
    failEverywhere(opened.status().message());
  Session &session = *opened;
  if (Status status = session.checkLaunch(launched); !status)
    failEverywhere(status.message());
  if (options.train)
    if (Status status = checkTrainable(session.layout()); !status)
      failEverywhere(status.message());
  if (Status status = session.planDevice(); !status)
    failAlone(status.message());
  auto read = io::readNpz(options.train ? options.data : options.inputs);
  if (!read)
    failEverywhere(read.message());
  // Every rank's files are checked before any rank starts.
  if (Status status = session.loadRanks(firstRank, count); !status)
    failAlone(status.message());
  if (options.train) {
    auto data = TrainingData::make(std::move(*read), session.layout(), options.steps, options.data);
    if (!data)
      failEverywhere(data.message());
    inputs.training = std::move(*data);
    return session;
  }
  inputs.tensors = std::move(*read);
  NamedInputs named;
  for (const io::NamedTensor &input : inputs.tensors)
    named.emplace_back(input.name, &input.tensor);
  auto ordered = session.orderInputs(named);
  if (!ordered)
    failEverywhere(options.inputs + ": " + ordered.status().message());
  inputs.ordered = std::move(*ordered);
  return session;
}

RunOptions runOptionsOf(const Options &options) {
  return {options.warmup, options.iters, options.profile, !options.trace.empty()};
}

std::chrono::milliseconds timeoutOf(const Options &options) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.commTimeout * 1000)));
}

} // namespace shardc::shardrun
