//===- TrainLoop.h - shardrun --train: steps, their lines, checkpoints -*- C++ -*-===//
//
// The loop of `shardrun ART --train --data DATA.npz --steps N`, however the
// ranks run: resume from --resume's checkpoint (at step k), run steps k+1
// to N on DATA's batches, print `step I loss X grad_norm G` per step (the
// loss before that step's update) and append it to --log as JSON, save
// --save's checkpoint every --save-every steps and at the end, write
// --export-onnx's model after the last step. A loss that
// is not finite stops the run with one line naming the step, before any
// later save: the last checkpoint written stays the one on disk.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_TOOLS_SHARDRUN_TRAINLOOP_H
#define SHARDC_TOOLS_SHARDRUN_TRAINLOOP_H

#include "runtime/session/Training.h"
#include "tools/shardrun/RankStart.h"

#include <string>

namespace shardc::shardrun {

/// Runs the loop on `training` (this process's ranks of `session`) over
/// `data`. The process of the output rank prints the lines, the log and the
/// summary (`how` the ranks run: "as threads", "under MPI"). Errors every
/// rank sees alike (a bad checkpoint, a loss that is not finite) go to
/// `failEverywhere`, the others to `failAlone`.
void trainLoop(const Options &options, const rt::Session &session, rt::Training &training,
               TrainingData &data, bool reports, const std::string &how,
               const Failure &failEverywhere, const Failure &failAlone);

} // namespace shardc::shardrun

#endif
