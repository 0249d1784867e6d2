//===- PreparedRank.h - one rank's programs, ready to run -------*- C++ -*-===//
//
// What a rank prepares once and runs as often as asked (after IREE's
// session and XLA's thunk Initialize): its device, and on it either its
// program's executor or, for a pipeline artifact, its stages' action list.
// Preparing binds every step to its kernel, checks it, places the arena and
// copies the weights; a run only copies the inputs in and the outputs out.
// The Session that prepared it and the world communicator it was prepared
// on must outlive it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_PREPAREDRANK_H
#define SHARDC_RUNTIME_SESSION_PREPAREDRANK_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Communicator.h"
#include "runtime/core/Device.h"
#include "runtime/core/Executor.h"
#include "runtime/core/Trace.h"
#include "runtime/session/DevicePlan.h"
#include "runtime/session/PipelineRank.h"

#include <memory>
#include <vector>

namespace shardc::rt {

/// Untimed runs, then timed ones, optionally timing every step and
/// recording what the timed runs did for a trace (Trace.h).
struct RunOptions {
  int warmup = 0;
  int iters = 1;
  bool profile = false;
  bool trace = false;
};

/// What one rank measured and produced.
struct RankRun {
  /// The whole outputs on the output rank; elsewhere empty when the
  /// runtime gathers outputs (and on a pipeline's other ranks), else whole.
  std::vector<HostTensor> outputs;
  std::vector<double> seconds; ///< one per timed run
  int64_t arenaBytes = 0;
  std::vector<StepProfile> profile;
  /// With RunOptions::trace: the timed runs' events.
  std::vector<TraceEvent> trace;
};

class PreparedRank {
public:
  /// Prepares `programs` (one, or a pipeline rank's under `pipeline`)
  /// on a fresh device of `plan`, their collectives over `world`.
  static StatusOr<std::unique_ptr<PreparedRank>> prepare(const DevicePlan &plan,
                                                         const PipelinePlan *pipeline,
                                                         const std::vector<Artifact> &programs,
                                                         OutputGather gather,
                                                         Communicator &world);

  /// The warm-up and timed runs of `options` on `inputs` (in the artifact's
  /// input order); `result` gets the last run's outputs.
  Status run(const std::vector<const HostTensor *> &inputs, const RunOptions &options,
             RankRun &result);

  /// The program's executor, whose states a training checkpoints; null for
  /// a pipeline rank, which has one per program of its stages.
  Executor *executor() { return executor_.get(); }
  /// A pipeline rank (its states are its programs' StatePool); null for
  /// any other.
  PipelineRank *pipeline() { return pipeline_.get(); }

private:
  PreparedRank(std::unique_ptr<Device> device, OutputGather gather)
      : device_(std::move(device)), gather_(std::move(gather)) {}

  /// The runtime's gathers of the program's outputs (pieces_) into
  /// `outputs` (OutputGather.h).
  Status gatherOutputs(std::vector<HostTensor> &outputs);

  // Declared first: destroyed after what runs on it.
  std::unique_ptr<Device> device_;
  OutputGather gather_;
  /// What the program returned, when the runtime gathers outputs: kept
  /// between runs so that the executor reuses the buffers.
  std::vector<HostTensor> pieces_;
  std::unique_ptr<PipelineRank> pipeline_; ///< a pipeline artifact's
  std::unique_ptr<Executor> executor_;     ///< any other artifact's
};

} // namespace shardc::rt

#endif
