//===- Pipeline.cpp - the compiler's phases, as --emit names them ---------===//
#include "compiler/Driver/Pipeline.h"

#include "passes/Graph/Passes.h"
#include "passes/Lowering/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace shardc::driver {

std::optional<Phase> parsePhase(StringRef name) {
  if (name == "import")
    return Phase::Import;
  if (name == "graph")
    return Phase::Graph;
  if (name == "exec")
    return Phase::Exec;
  if (name == "artifact")
    return Phase::Artifact;
  return std::nullopt;
}

StringRef phaseNames() { return "import|graph|exec|artifact"; }

LogicalResult runPipeline(ModuleOp module, Phase until) {
  PassManager pm(module->getContext());
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  // Folding during import leaves dead shape arithmetic and duplicate constants.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (until >= Phase::Graph)
    graph::buildRaisePipeline(pm);
  if (until >= Phase::Exec)
    lowering::buildLowerPipeline(pm);
  return pm.run(module);
}

} // namespace shardc::driver
