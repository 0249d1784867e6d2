//===- UniformSplit.cpp - the layer split Megatron-LM would make ----------===//
#include "compiler/Report/UniformSplit.h"

namespace shardc::report {

size_t uniformFirstLayer(size_t stage, size_t layers, size_t stages) {
  return stage * layers / stages;
}

std::vector<double> uniformStageSeconds(llvm::ArrayRef<OpCost> ops, size_t layers,
                                        size_t stages) {
  std::vector<double> seconds(stages, 0);
  if (stages == 0)
    return seconds;
  // Stage of each layer: the last stage whose first layer is at or before it.
  std::vector<size_t> stageOfLayer(layers, 0);
  for (size_t stage = 0; stage < stages; ++stage)
    for (size_t layer = uniformFirstLayer(stage, layers, stages);
         layer < uniformFirstLayer(stage + 1, layers, stages); ++layer)
      stageOfLayer[layer] = stage;
  size_t lastInLayer = ops.size();
  for (size_t index = ops.size(); index-- > 0;)
    if (ops[index].layer) {
      lastInLayer = index;
      break;
    }
  size_t stage = 0; // before the first layer: the embedding's stage
  for (size_t index = 0; index < ops.size(); ++index) {
    if (ops[index].layer && *ops[index].layer < layers)
      stage = stageOfLayer[*ops[index].layer];
    else if (lastInLayer < ops.size() && index > lastInLayer)
      stage = stages - 1; // after the last layer: the head's stage
    seconds[stage] += ops[index].seconds;
  }
  return seconds;
}

} // namespace shardc::report
