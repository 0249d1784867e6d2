//===- Training.h - run a training artifact step by step, checkpoint it -*- C++ -*-===//
//
// A training artifact (its manifest's "training", TrainingSpec.h) is one
// compiled training step: forward, backward and the optimizer's update,
// which writes the ranks' state buffers (Executor.h; a pipeline rank's
// programs share them: StatePool.h). Training prepares the
// ranks once and runs the step as often as asked, each time on the batch
// given; the states stay on the devices from step to step and leave them
// only for a checkpoint (Checkpoint.h), which resume() loads back.
//
// The ranks run as threads of this process (ThreadedRanks.h), or one rank
// runs in each process of an MPI job: then the world communicator (a host
// one) also carries the loss to every rank, so that all stop alike, and
// coordinates the checkpoint: rank 0 makes the staging folder, every rank
// writes its file into it (the folder must be on a file system they
// share), rank 0 writes checkpoint.json and moves the folder into place.
// A pipeline rank's file holds the states of its stages: checkpoints,
// resumes and exports read and write every rank's state pool alike.
//
// After a step or a resume fails, the states are no longer a step's: every
// later call fails with that error. A failed save leaves them as they were.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_SESSION_TRAINING_H
#define SHARDC_RUNTIME_SESSION_TRAINING_H

#include "runtime/session/Checkpoint.h"
#include "runtime/session/Session.h"
#include "runtime/session/ThreadedRanks.h"

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace shardc::rt {

/// Fails unless `layout`'s artifact is one Training runs: a training artifact
/// (its manifest has "training"), a pipeline's included.
Status checkTrainable(const ArtifactLayout &layout);

/// What a step reports: the loss before its update and the gradients' norm.
struct StepLoss {
  float loss = 0, gradNorm = 0;
};

class Training {
public:
  /// Prepares every rank `session` loaded as a thread of this process; their
  /// collectives wait at most `timeout`.
  static StatusOr<std::unique_ptr<Training>> prepare(const Session &session,
                                                     std::chrono::milliseconds timeout);
  /// Prepares the one rank `session` loaded, its collectives over `world`
  /// (a host communicator: MPI's), which outlives the training.
  static StatusOr<std::unique_ptr<Training>> prepare(const Session &session, Communicator &world);

  /// The steps run so far, counting those of the checkpoint resumed from.
  int64_t steps() const { return steps_; }

  /// Runs the next step on `inputs` (the artifact's input order; every rank
  /// gets them whole): its loss and gradient norm, the output rank's.
  StatusOr<StepLoss> step(const std::vector<const HostTensor *> &inputs);

  /// Saves every rank's states after steps() steps as the checkpoint
  /// `directory` (Checkpoint.h). Under MPI every rank calls it.
  Status save(const std::string &directory);

  /// Writes the source model with the trained weights after steps() steps
  /// as the ONNX file `path` (OnnxExport.h). Under MPI every rank calls it:
  /// the blocks travel to rank 0, which writes the file.
  Status exportOnnx(const std::string &path);

  /// Loads the states `checkpoint` (read for this artifact: readCheckpoint)
  /// holds for this process's ranks; steps() becomes its step.
  Status resume(const Checkpoint &checkpoint);

private:
  Training(const Session &session, const TrainingSpec &spec) : session_(session), spec_(spec) {}

  /// The states of the rank at `index` among this process's ranks: its
  /// executor's, or a pipeline rank's (its stages' programs share them).
  StatePool &states(int index);
  /// The loss and gradient norm among a run's outputs.
  StepLoss lossOf(const std::vector<HostTensor> &outputs) const;
  /// The states of one rank on `world_` (under MPI), the folder made by
  /// rank 0 and shared with the others.
  Status saveOnRank(const std::string &directory);
  /// Remembers `status` when it failed: the states are then lost.
  Status keep(Status status);

  const Session &session_;
  const TrainingSpec &spec_;
  int64_t steps_ = 0;
  Status broken_;
  /// Ranks as threads, or else this process's one rank and its world.
  std::unique_ptr<ThreadedRanks> threads_;
  std::vector<RankRun> runs_;
  std::unique_ptr<PreparedRank> rank_;
  Communicator *world_ = nullptr;
};

} // namespace shardc::rt

#endif
