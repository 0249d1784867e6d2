//===- OutputGather.h - outputs gathered onto the output rank ---*- C++ -*-===//
//
// An output split over batch axes (manifest outputs[i].gather) leaves each
// rank's program as a piece; only the output rank needs it whole. Each rank
// holding a piece sends it to the output rank, which places the pieces in
// order (mixed radix over the axes, major first) along the gather's dim:
// one copy of the rows, where an all-gather in the program gave every rank
// all of them (docs/design.md, "Results gathered by the runtime").
//
// The peers of an output are the ranks whose coordinates equal the output
// rank's on every axis but the gather's (the ranks of other tp coordinates
// hold copies and send nothing). They form a group, split from the world
// once when the rank is prepared, and meet in Communicator::gather (the
// in-process world copies from the peers' buffers in place, MPI calls
// MPI_Gather); a device communicator (NCCL) is given device memory.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_OUTPUTGATHER_H
#define SHARDC_RUNTIME_SESSION_OUTPUTGATHER_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Communicator.h"
#include "runtime/core/Device.h"

#include <memory>
#include <vector>

namespace shardc::rt {

class OutputGather {
public:
  OutputGather() = default;
  /// The gathers of `layout`'s outputs as rank `rank` takes part in them.
  OutputGather(const ArtifactLayout &layout, int rank);

  /// Whether any output is gathered by the runtime.
  bool any() const { return !outputs_.empty(); }
  /// Whether this rank is the output rank, which ends with the whole outputs.
  bool holdsWhole() const { return rank_ == outputRank_; }

  /// Splits each gathered output's group from `world`: a collective over
  /// the world, called by every rank once, before anything else splits it.
  Status connect(Communicator &world);

  /// Whether output `index` is gathered by the runtime.
  bool gathers(size_t index) const {
    return index < outputs_.size() && !outputs_[index].pieceRanks.empty();
  }

  /// Output `index`'s `piece` on this rank: the output rank gets the whole
  /// in `whole` (its buffer reused when the shape is already right: a 50 MB
  /// output allocated afresh each step costs its page faults); a peer gives
  /// its piece; any other rank does nothing. `whole` is untouched elsewhere.
  Status gather(size_t index, const HostTensor &piece, HostTensor &whole, Device &device) const;

private:
  struct Output {
    int dim = 0;
    /// The ranks holding piece k, in piece order; empty: not gathered.
    std::vector<int> pieceRanks;
    /// The piece ranks' group (ordered by piece), where this rank is one.
    std::shared_ptr<Communicator> group;
  };
  std::vector<Output> outputs_;
  int rank_ = 0;
  int outputRank_ = 0;
};

} // namespace shardc::rt

#endif
