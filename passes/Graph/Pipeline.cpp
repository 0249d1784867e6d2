//===- Pipeline.cpp - the shardc-graph-raise pipeline ---------------------===//
#include "passes/Graph/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace shardc::graph {

#define GEN_PASS_REGISTRATION
#include "passes/Graph/Passes.h.inc"

void buildRaisePipeline(mlir::OpPassManager &pm) {
  // Activations first: the norm and MLP patterns look for graph.rsqrt, gelu
  // and silu. Linear before attention, MLP and MoE, which are made of linears;
  // MLP before MoE, whose experts are MLPs; the routed experts are raised
  // inside the MoE blocks found.
  // Batch-row gathers first: they are the attention mask's, before any
  // pattern looks at it.
  pm.addPass(createRaiseBatchGathersPass());
  pm.addPass(createRaiseActivationsPass());
  pm.addPass(createRaiseNormsPass());
  pm.addPass(createRaiseLinearPass());
  pm.addPass(createRaiseRotaryPass());
  pm.addPass(createRaiseAttentionPass());
  pm.addPass(createRaiseMlpPass());
  pm.addPass(createRaiseMoePass());
  // The routed experts' matchers read index lists as constants: densified
  // selections leave them as arithmetic on a constant grid until folded.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(createRaiseRoutedExpertsPass());
  // Raising leaves the matched primitives dead.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerGraphPasses() {
  registerGraphRaisePasses();
  mlir::PassPipelineRegistration<>("shardc-graph-raise",
                                   "Recognize the composite ops of transformer models",
                                   [](mlir::OpPassManager &pm) { buildRaisePipeline(pm); });
}

} // namespace shardc::graph
