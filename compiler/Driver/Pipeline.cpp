//===- Pipeline.cpp - the compiler's phases, as --emit names them ---------===//
#include "compiler/Driver/Pipeline.h"

#include "passes/Autodiff/Passes.h"
#include "passes/Graph/Passes.h"
#include "passes/Lowering/Passes.h"
#include "passes/Partition/Passes.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Sharding/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace shardc::driver {

std::optional<Phase> parsePhase(StringRef name) {
  if (name == "import")
    return Phase::Import;
  if (name == "graph")
    return Phase::Graph;
  if (name == "sharded")
    return Phase::Sharded;
  if (name == "partitioned")
    return Phase::Partitioned;
  if (name == "exec")
    return Phase::Exec;
  if (name == "artifact")
    return Phase::Artifact;
  return std::nullopt;
}

StringRef phaseNames() { return "import|graph|sharded|partitioned|exec|artifact"; }

LogicalResult runPipeline(ModuleOp module, std::optional<Phase> from, Phase until,
                          const PipelineSettings &settings) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  auto runs = [&](Phase phase) { return (!from || *from < phase) && phase <= until; };
  if (runs(Phase::Import)) {
    // Folding during import leaves dead shape arithmetic and duplicate constants.
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // No phase after import takes a data-dependent shape.
    pm.addPass(graph::createDensifySelectionsPass());
  }
  if (runs(Phase::Graph)) {
    graph::buildRaisePipeline(pm);
    if (settings.moeCapacityFactor > 0) {
      graph::SetMoeCapacityPassOptions capacity;
      capacity.factor = settings.moeCapacityFactor;
      pm.addPass(graph::createSetMoeCapacityPass(capacity));
    }
    // After raising, whose patterns match the model's own types. A training
    // step converts after its projections are split (below).
    if (!settings.dtype.empty() && !settings.training) {
      graph::ConvertPrecisionPassOptions precision;
      precision.dtype = settings.dtype;
      pm.addPass(graph::createConvertPrecisionPass(precision));
    }
    if (const std::optional<TrainingSettings> &training = settings.training) {
      // Each part of a fused projection (QKV) gets its own linear before the
      // gradient is taken, so that each part's backward is split by heads
      // on its own; after it, the weight's parts are parameters the sharding
      // phase must keep as they are.
      pm.addPass(sharding::createSplitFusedProjectionsPass());
      pm.addPass(createCanonicalizerPass());
      // Mixed precision: the forward in the compute type, each float32
      // weight the master the update keeps, read through one cast; the
      // gradient is then taken of the converted forward, so the backward
      // computes in that type too and each cast's gradient is the
      // master's, in float32 (docs/training.md).
      if (!settings.dtype.empty()) {
        graph::ConvertPrecisionPassOptions precision;
        precision.dtype = settings.dtype;
        precision.masterWeights = true;
        pm.addPass(graph::createConvertPrecisionPass(precision));
      }
      autodiff::AutodiffPassOptions options;
      options.loss = training->loss;
      options.optimizer = training->optimizer;
      options.lr = training->lr;
      options.beta1 = training->beta1;
      options.beta2 = training->beta2;
      options.eps = training->eps;
      options.weightDecay = training->weightDecay;
      options.noDecay1d = training->noDecay1d;
      options.momentum = training->momentum;
      options.gradClip = training->gradClip;
      options.freeze = training->freeze;
      options.untie = training->untie;
      options.sumGradients = training->microbatches > 1;
      options.lossScaling = settings.dtype == "f16";
      options.tagOwners = training->pipelined;
      pm.addPass(autodiff::createAutodiffPass(options));
      // The step's gradient arithmetic repeats shapes and constants.
      pm.addPass(createCanonicalizerPass());
      pm.addPass(createCSEPass());
      // Mixed precision keeps each trained weight's compute-type copy as
      // storage beside its master (what ZeRO splits apart); the casts left
      // are of frozen weights, one per use.
      if (!settings.dtype.empty()) {
        pm.addPass(graph::createComputeCopiesPass());
        pm.addPass(graph::createSplitWeightCastsPass());
      }
    }
  }
  if (runs(Phase::Sharded)) {
    // The composites end with the graph phase: sharding and lowering see ops.
    pm.addPass(graph::createInlineCompositesPass());
    sharding::AutoShardPassOptions options;
    options.sequenceParallel = settings.sequenceParallel;
    options.device = settings.device;
    options.deviceMemory = settings.deviceMemory;
    options.zero = settings.training ? settings.training->zero : 0;
    options.zeroAuto = settings.training && settings.training->zeroAuto;
    sharding::buildShardPipeline(pm, options);
    // With dist.pipeline (--pp): stages cut from the sharded program, and
    // each pp rank's schedule; without it both do nothing.
    pipeline::PipelineStagesPassOptions stages;
    stages.device = settings.device;
    stages.deviceMemory = settings.deviceMemory;
    pm.addPass(pipeline::createPipelineStagesPass(stages));
    pm.addPass(pipeline::createPipelineSchedulePass());
  }
  if (runs(Phase::Partitioned)) {
    pm.addPass(partition::createVerifyShardedPass());
    pm.addPass(partition::createPartitionPass());
    pm.addPass(pipeline::createAccumulateMicrobatchesPass());
    // A training pipeline is cut into its stage programs here, when its
    // sums over micro-batches are accumulators, and then scheduled.
    pm.addPass(pipeline::createPipelineTrainingProgramsPass());
    pm.addPass(pipeline::createPipelineSchedulePass());
    pm.addPass(pipeline::createSplitMicrobatchesPass());
    pm.addPass(partition::createDeferResultGathersPass());
    // Last, on the program each device runs: the collectives the training
    // step's sums and gathers became, whatever put them where they are.
    if (settings.training && settings.training->bucketMb > 0) {
      partition::BucketCollectivesPassOptions buckets;
      buckets.bucketMb = settings.training->bucketMb;
      pm.addPass(partition::createBucketCollectivesPass(buckets));
    }
    pm.addPass(partition::createVerifyPartitionedPass());
  }
  if (runs(Phase::Exec)) {
    // The CPU's GEMMs read a weight stored [K, N] faster than one read
    // transposed; cuBLAS reads either at the same speed.
    if (settings.target == "cpu")
      pm.addPass(lowering::createPretransposeWeightsPass());
    lowering::buildLowerPipeline(pm, /*cpuTarget=*/settings.target == "cpu");
    if (settings.target == "cuda")
      pm.addPass(lowering::createGenerateCudaKernelsPass());
  }
  return pm.run(module);
}

} // namespace shardc::driver
