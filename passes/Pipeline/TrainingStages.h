//===- TrainingStages.h - the stage of every op of a training step -*- C++ -*-===//
//
// The stage search cuts a training step's forward ops (StageProgram.h); this
// gives every other op that is not placed the stage it runs on, as a
// `dist.pipeline_stage` attribute that survives partitioning, from which
// shardc-pipeline-training-programs cuts the step (docs/pipeline.md):
//
// - a forward op: its stage by the cut;
// - a backward op: the stage of the forward op whose gradient rule made it
//   (shardc-autodiff's graph.vjp_of), but never later than a backward
//   value it reads was made: gradients flow to earlier stages only, as the
//   schedules run the backward. Data flow alone cannot tell: the backward
//   starts from a constant seed, so its first ops read forward values only,
//   as a norm's recomputed statistics do;
// - a backward op no rule made (a sum of two gradients, a reshard): the
//   earliest stage of the backward values it reads; reading none, the
//   latest stage of the ops that read it;
// - an update op: the stage of its largest operand (the weight or gradient
//   it updates; scalars such as the gradient norm's partial sums follow the
//   latest stage); reading only storage and constants (a state's decay),
//   the latest stage of the ops that read it.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_PIPELINE_TRAININGSTAGES_H
#define SHARDC_PASSES_PIPELINE_TRAININGSTAGES_H

#include "passes/Pipeline/StageProgram.h"

namespace shardc::pipeline {

/// `stageOf[i]` is the stage of forward op i of `program` (non-decreasing);
/// tags every op that is not placed.
void tagTrainingStages(const TrainingStageProgram &program, llvm::ArrayRef<int64_t> stageOf,
                       int64_t stages, const sharding::MeshShape &mesh);

} // namespace shardc::pipeline

#endif
