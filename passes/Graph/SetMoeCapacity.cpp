//===- SetMoeCapacity.cpp - a per-expert capacity for graph.moe -----------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_SETMOECAPACITYPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace {

struct SetMoeCapacityPass : shardc::graph::impl::SetMoeCapacityPassBase<SetMoeCapacityPass> {
  using SetMoeCapacityPassBase::SetMoeCapacityPassBase;

  void runOnOperation() override {
    if (!(factor > 0) || !std::isfinite(factor)) {
      getOperation().emitError() << "the MoE capacity factor must be a positive number; got "
                                 << factor;
      return signalPassFailure();
    }
    getOperation().walk([&](shardc::graph::MoeOp moe) {
      // The graph phase's shapes are the whole model's: T is every token.
      double entries = double(moe.getIndices().getType().getNumElements());
      double perExpert = factor * entries / double(moe.getExperts());
      // At least one entry, at most all of them (more would change nothing);
      // clamped before the conversion, which a huge factor would overflow.
      int64_t capacity = int64_t(std::clamp(std::ceil(perExpert), 1.0, entries));
      moe.setCapacity(capacity);
    });
  }
};

} // namespace
