//===- TestShardingRules.cpp - print sharding rules for lit tests ---------===//
#include "passes/Sharding/Passes.h"
#include "passes/Sharding/ShardingRule.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_TESTSHARDINGRULESPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

struct TestShardingRulesPass : impl::TestShardingRulesPassBase<TestShardingRulesPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<graph::GraphDialect>(op->getDialect()) &&
          !isa<graph::WeightOp, graph::ConstantOp>(op))
        op->setAttr("dist.rule", StringAttr::get(op->getContext(), getShardingRule(op).describe()));
    });
  }
};

} // namespace
} // namespace shardc::sharding
