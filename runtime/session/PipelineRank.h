//===- PipelineRank.h - one rank of a pipeline artifact ---------*- C++ -*-===//
//
// A pipeline rank holds the programs of the stages its pp coordinate runs
// and runs that coordinate's action list (docs/pipeline.md) in order:
//   recv (transfer t, micro-batch m)  t's bytes from the rank of stage
//        `from` (same dp/tp coordinates) over the world communicator;
//   forward, backward_input, backward_weight (stage k, micro-batch m)
//        that program of stage k on micro-batch m of the caller's inputs
//        and the transfers held for m;
//   update (stage k, level l)  that update program, once per step, on the
//        whole caller inputs it lists and the transfers held for m = 0;
//   send (transfer t, micro-batch m)  a value a program produced, to the
//        rank of stage `to`.
// A produced value is held until its one consumer runs: sent, or read by a
// program of this rank (a training stage's forward hands its backward the
// activations it keeps). Transfers match in order per (sender, receiver)
// pair, so the lists the compiler wrote decide the order on both sides;
// each carries its (transfer, micro-batch), which the receiver checks, so
// lists that disagree fail with one line instead of mixing up micro-batches.
// The output rank joins the caller outputs' micro-batches at the end.
//
// The rank's programs share one StatePool: a training step's forward reads
// the parameters its update writes, and the update reads the gradients the
// backward parts accumulate over the micro-batches (zeroed as a run starts).
//
// Transfers go over host communicators (in-process, MPI): the executors
// take and give host tensors, so a value is on the host between stages
// anyway. A device world (NCCL) is refused when preparing.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_PIPELINERANK_H
#define SHARDC_RUNTIME_SESSION_PIPELINERANK_H

#include "runtime/core/CollectiveGroups.h"
#include "runtime/core/Executor.h"
#include "runtime/core/PipelinePlan.h"
#include "runtime/core/StatePool.h"
#include "runtime/core/Trace.h"
#include "runtime/session/OutputGather.h"

#include <memory>
#include <optional>
#include <vector>

namespace shardc::rt {

class PipelineRank {
public:
  /// Prepares `programs` (this rank's programs, as PipelinePlan::programsAt
  /// lists them for its coordinate) on `device`, all on the rank's state
  /// pool. Their collectives run on groups split up front from `world`
  /// (over the mesh's axes other than pp): the ranks hold different
  /// programs, so the groups cannot be split in program order.
  static StatusOr<std::unique_ptr<PipelineRank>> prepare(const PipelinePlan &plan,
                                                         const std::vector<Artifact> &programs,
                                                         Device &device, Communicator &world);

  /// Runs this rank's action list once (a training pipeline: one step) on
  /// the caller's whole `inputs` (in the manifest's order). `outputs`
  /// become the whole outputs on the output rank (each micro-batch's pieces
  /// gathered by `gather`, then the micro-batches joined) and are emptied
  /// elsewhere. With `trace`, one event per action (and, with `profile`,
  /// per step of each program run).
  Status run(const std::vector<const HostTensor *> &inputs, const OutputGather &gather,
             std::vector<HostTensor> &outputs, bool profile, std::vector<TraceEvent> *trace);

  /// The programs' arenas together.
  int64_t arenaBytes() const;
  /// The programs' step profiles, one after the other ("stage k: " or
  /// "stage k backward_input: " before each source).
  std::vector<StepProfile> profile() const;

  /// The states the rank's programs share (a checkpoint's).
  StatePool &states() { return states_; }
  const StatePool &states() const { return states_; }

private:
  PipelineRank(const PipelinePlan &plan, Device &device, Communicator &world,
               const MeshShape &mesh)
      : plan_(plan), device_(device), world_(world), mesh_(mesh), groups_(mesh, world),
        states_(device) {}

  /// The rank of `stage` with this rank's other coordinates.
  int peerOf(int stage) const;
  /// Runs the program of a forward, backward or update action.
  Status runProgram(const PipelineAction &action, const std::vector<const HostTensor *> &inputs,
                    bool profile, std::vector<TraceEvent> *trace);
  Status perform(const PipelineAction &action, const std::vector<const HostTensor *> &inputs,
                 bool profile, std::vector<TraceEvent> *trace);

  const PipelinePlan &plan_;
  Device &device_;
  Communicator &world_;
  MeshShape mesh_;
  int coordinate_ = 0;
  CollectiveGroups groups_;
  /// Declared before the executors, which bind its memory: destroyed after them.
  StatePool states_;
  /// One per program of the rank, by its index in plan_.programs (null for
  /// the other coordinates' programs).
  std::vector<std::unique_ptr<Executor>> executors_;

  // The state of one run.
  /// Transfers received or produced and not yet used, by (transfer, micro-batch).
  std::vector<std::vector<std::optional<HostTensor>>> held_;
  /// Caller outputs by output and micro-batch, as programs produce them.
  std::vector<std::vector<std::optional<HostTensor>>> pieces_;
};

} // namespace shardc::rt

#endif
