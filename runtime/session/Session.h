//===- Session.h - open an artifact once, run it ---------------*- C++ -*-===//
//
// The one reader of an artifact (after IREE's runtime session and XLA's
// thunk Initialize): open() reads the manifest and rank 0's program once and
// checks them; then, in the order a launcher needs them, checkLaunch()
// compares the ranks started with the ranks compiled, planDevice() picks the
// device (the GPU of the local rank, its architecture checked, the
// artifact's generated kernels loaded and held), loadRanks() reads and checks the
// program and weights of the ranks this process runs, and orderInputs()
// checks the caller's inputs against the signature. A pipeline artifact's
// rank runs its stages' action list (PipelineRank.h). Each step is separate so
// that under MPI the caller can tell errors every rank sees from errors of
// one rank. Running is then one rank on a given world communicator (an MPI
// or NCCL process), or every loaded rank as a thread of this process; each
// rank is prepared on its device first (PreparedRank.h), once per run here,
// or once for many runs through ThreadedRanks.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_SESSION_H
#define SHARDC_RUNTIME_SESSION_SESSION_H

#include "runtime/core/Artifact.h"
#include "runtime/core/Communicator.h"
#include "runtime/session/DevicePlan.h"
#include "runtime/session/PreparedRank.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt {

/// Inputs by name, as a caller gives them.
using NamedInputs = std::vector<std::pair<std::string, const HostTensor *>>;

class Session {
public:
  /// Reads and checks the layout of the artifact in `directory`.
  static StatusOr<Session> open(const std::string &directory);

  const ArtifactLayout &layout() const { return layout_; }

  /// Whether `launched` ranks can run this artifact: a target this runtime
  /// runs, and as many ranks as it was compiled for.
  Status checkLaunch(int launched) const;

  /// Chooses the device every rank of this process runs on.
  Status planDevice();
  const DevicePlan &device() const { return plan_; }

  /// Reads and checks the files of ranks first .. first + count - 1, all of
  /// them before any runs. Ranks that read one weight file share it.
  Status loadRanks(int first, int count);
  /// A loaded rank's programs, weights and signatures: one, or one per
  /// pipeline stage the rank holds.
  const std::vector<Artifact> &programs(int rank) const { return loaded_.at(rank - firstRank_); }
  /// The ranks loadRanks() loaded: firstLoadedRank() on, loadedRanks() of them.
  int firstLoadedRank() const { return firstRank_; }
  int loadedRanks() const { return static_cast<int>(loaded_.size()); }
  /// What the caller gives and gets (whole tensors).
  const std::vector<TensorSignature> &inputs() const { return layout_.inputs; }
  const std::vector<TensorSignature> &outputs() const { return layout_.outputs; }
  /// The rank whose RankRun holds the outputs: a pipeline's output_rank, else 0.
  int outputRank() const { return layout_.outputRank(); }

  /// `given` in the artifact's input order, once each matches its signature.
  StatusOr<std::vector<const HostTensor *>> orderInputs(const NamedInputs &given) const;

  /// Prepares loaded rank `rank` on a fresh device of the plan, its
  /// collectives over `world`.
  StatusOr<std::unique_ptr<PreparedRank>> prepareRank(int rank, Communicator &world) const;

  /// Prepares loaded rank `rank` and runs it.
  Status runRank(int rank, Communicator &world, const std::vector<const HostTensor *> &inputs,
                 const RunOptions &options, RankRun &result) const;

  /// Runs every loaded rank as a thread of this process (an in-process
  /// world, whose collectives wait at most `timeout`); `results` by rank.
  Status runAsThreads(const std::vector<const HostTensor *> &inputs, const RunOptions &options,
                      std::chrono::milliseconds timeout, std::vector<RankRun> &results) const;

private:
  explicit Session(ArtifactLayout layout) : layout_(std::move(layout)) {}

  ArtifactLayout layout_;
  DevicePlan plan_;
  int firstRank_ = 0;
  std::vector<std::vector<Artifact>> loaded_;
};

} // namespace shardc::rt

#endif
