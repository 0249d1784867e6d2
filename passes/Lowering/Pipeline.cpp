//===- Pipeline.cpp - the shardc-lower pipeline ---------------------------===//
#include "passes/Lowering/Passes.h"

#include "mlir/Pass/PassRegistry.h"

namespace shardc::lowering {

#define GEN_PASS_REGISTRATION
#include "passes/Lowering/Passes.h.inc"

void buildLowerPipeline(mlir::OpPassManager &pm, bool cpuTarget) {
  pm.addPass(createLowerToExecPass());
  if (cpuTarget)
    pm.addPass(createFoldMatMulTransposesPass());
  pm.addPass(createFuseElementwisePass());
  if (cpuTarget)
    pm.addPass(createFuseLinearEpiloguePass());
  pm.addPass(createWriteStatesInPlacePass());
  pm.addPass(createPlanMemoryPass());
}

void registerLoweringPasses() {
  registerLowerToExecPasses();
  mlir::PassPipelineRegistration<>("shardc-lower",
                                   "Lower the graph program to a planned exec program",
                                   [](mlir::OpPassManager &pm) { buildLowerPipeline(pm); });
}

} // namespace shardc::lowering
