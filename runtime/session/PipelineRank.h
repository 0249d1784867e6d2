//===- PipelineRank.h - one rank of a pipeline artifact ---------*- C++ -*-===//
//
// A pipeline rank holds the programs of the stages its pp coordinate runs
// and runs that coordinate's action list (docs/pipeline.md) in order:
//   recv (transfer t, micro-batch m)  t's bytes from the rank of stage
//        `from` (same dp/tp coordinates) over the world communicator;
//   forward (stage k, micro-batch m)  stage k's executor on micro-batch m of
//        the caller's inputs and the transfers received for m;
//   send (transfer t, micro-batch m)  a value forward produced, to the rank
//        of stage `to`.
// Transfers match in order per (sender, receiver) pair, so the lists the
// compiler wrote decide the order on both sides. The output rank joins the
// caller outputs' micro-batches at the end.
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
#include "runtime/core/Trace.h"
#include "runtime/session/OutputGather.h"

#include <memory>
#include <optional>
#include <vector>

namespace shardc::rt {

class PipelineRank {
public:
  /// Prepares `stages` (this rank's stage programs, in stage order) on
  /// `device`. Their collectives run on groups split up front from `world`
  /// (over the mesh's axes other than pp): the ranks hold different
  /// programs, so the groups cannot be split in program order.
  static StatusOr<std::unique_ptr<PipelineRank>> prepare(const PipelinePlan &plan,
                                                         const std::vector<Artifact> &stages,
                                                         Device &device, Communicator &world);

  /// Runs this rank's action list once on the caller's whole `inputs` (in
  /// the manifest's order). `outputs` become the whole outputs on the
  /// output rank (each micro-batch's pieces gathered by `gather`, then the
  /// micro-batches joined) and are emptied elsewhere. With `trace`, one
  /// event per action (and, with `profile`, per step of each forward).
  Status run(const std::vector<const HostTensor *> &inputs, const OutputGather &gather,
             std::vector<HostTensor> &outputs, bool profile, std::vector<TraceEvent> *trace);

  /// The stages' arenas together.
  int64_t arenaBytes() const;
  /// The stages' step profiles, one after the other ("stage k: " before each source).
  std::vector<StepProfile> profile() const;

private:
  PipelineRank(const PipelinePlan &plan, Device &device, Communicator &world,
               const MeshShape &mesh)
      : plan_(plan), device_(device), world_(world), mesh_(mesh), groups_(mesh, world) {}

  /// The rank of `stage` with this rank's other coordinates.
  int peerOf(int stage) const;
  Status forward(const PipelineAction &action, const std::vector<const HostTensor *> &inputs,
                 bool profile, std::vector<TraceEvent> *trace);
  Status perform(const PipelineAction &action, const std::vector<const HostTensor *> &inputs,
                 bool profile, std::vector<TraceEvent> *trace);

  const PipelinePlan &plan_;
  Device &device_;
  Communicator &world_;
  MeshShape mesh_;
  int coordinate_ = 0;
  CollectiveGroups groups_;
  /// By position among this rank's stages (stage k is at k / pp).
  std::vector<std::unique_ptr<Executor>> executors_;
  std::vector<int> stages_;

  // The state of one run.
  /// Transfers received or produced and not yet used, by (transfer, micro-batch).
  std::vector<std::vector<std::optional<HostTensor>>> held_;
  /// Caller outputs by output and micro-batch, as forwards produce them.
  std::vector<std::vector<std::optional<HostTensor>>> pieces_;
};

} // namespace shardc::rt

#endif
