//===- Pipeline.cpp - the shardc-shard pipeline ---------------------------===//
#include "passes/Sharding/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace shardc::sharding {

#define GEN_PASS_REGISTRATION
#include "passes/Sharding/Passes.h.inc"

void buildShardPipeline(mlir::OpPassManager &pm, const AutoShardPassOptions &options) {
  pm.addPass(createSplitFusedProjectionsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createReplicateKvHeadsPass());
  pm.addPass(createAutoShardPass(options));
  PropagateShardingPassOptions propagation;
  propagation.device = options.device;
  pm.addPass(createPropagateShardingPass(propagation));
}

namespace {

/// shardc-shard's command-line options: shardc-auto-shard's.
struct ShardPipelineOptions : mlir::PassPipelineOptions<ShardPipelineOptions> {
  Option<bool> sequenceParallel{
      *this, "sequence-parallel",
      llvm::cl::desc("Split norms and the activations between blocks along the sequence")};
  Option<std::string> device{*this, "device", llvm::cl::desc("a100, h100, h200 or a JSON file"),
                             llvm::cl::init("h100")};
  Option<int64_t> deviceMemory{*this, "device-memory",
                               llvm::cl::desc("Bytes per device (0: the device's)"),
                               llvm::cl::init(0)};
  Option<unsigned> zero{*this, "zero", llvm::cl::desc("ZeRO stage of a training step (0-3)"),
                        llvm::cl::init(0)};
  Option<bool> zeroAuto{*this, "zero-auto",
                        llvm::cl::desc("The least ZeRO stage whose plan fits the device memory")};
};

} // namespace

void registerShardingPasses() {
  registerShardingPassesPasses();
  mlir::PassPipelineRegistration<ShardPipelineOptions>(
      "shardc-shard", "Split fused projections, choose every op's sharding, make reshards explicit",
      [](mlir::OpPassManager &pm, const ShardPipelineOptions &options) {
        AutoShardPassOptions search;
        search.sequenceParallel = options.sequenceParallel;
        search.device = options.device;
        search.deviceMemory = options.deviceMemory;
        search.zero = options.zero;
        search.zeroAuto = options.zeroAuto;
        buildShardPipeline(pm, search);
      });
}

} // namespace shardc::sharding
