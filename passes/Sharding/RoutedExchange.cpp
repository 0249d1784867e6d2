//===- RoutedExchange.cpp - what routed experts move and hold -------------===//
#include "passes/Sharding/RoutedExchange.h"

#include <algorithm>

namespace shardc::sharding {

CollectiveStep routedExchangeStep(graph::MoeOp moe, int64_t localTokens, const AxisList &axes) {
  int64_t slots = moe.getIndices().getType().getDimSize(1);
  int64_t hidden = moe.getInput().getType().getDimSize(1);
  CollectiveStep step{CollectiveKind::AllToAll, axes, 0, 0, {}, {}};
  step.inputShape = {localTokens * slots, hidden};
  step.outputShape = step.inputShape;
  return step;
}

int64_t moeRowBound(int64_t members, int64_t localTokens, int64_t slots, int64_t localExperts,
                    bool exchange, int64_t capacity) {
  int64_t bound = (exchange ? members * localTokens : localTokens) * std::min(slots, localExperts);
  if (capacity > 0)
    bound = std::min(bound, localExperts * capacity);
  return bound;
}

} // namespace shardc::sharding
