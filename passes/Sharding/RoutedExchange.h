//===- RoutedExchange.h - what routed experts move and hold ------*- C++ -*-===//
//
// One place for the sizes of graph.moe's exchange (docs/experts.md), used
// by the search's costs, the plan's report and the lowering's buffers.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_ROUTEDEXCHANGE_H
#define SHARDC_PASSES_SHARDING_ROUTEDEXCHANGE_H

#include "passes/Sharding/ValueSharding.h"

#include "dialects/Graph/GraphOps.h"

namespace shardc::sharding {

/// One direction of the exchange over `axes` (dispatch, or combine): each
/// device's `localTokens` x k entries of H values, as an all-to-all.
CollectiveStep routedExchangeStep(graph::MoeOp moe, int64_t localTokens, const AxisList &axes);

/// The rows one member's experts may receive in one step (the runtime's
/// worst case): every entry of the tokens they may see for them, or the
/// capacity's bound. `members` share the experts, `localExperts` each.
int64_t moeRowBound(int64_t members, int64_t localTokens, int64_t slots, int64_t localExperts,
                    bool exchange, int64_t capacity);

} // namespace shardc::sharding

#endif
