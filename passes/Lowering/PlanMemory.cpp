//===- PlanMemory.cpp - place arena buffers by live range -----------------===//
#include "passes/Lowering/ArenaPlanner.h"
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

int64_t byteSize(MemRefType type) {
  Type element = type.getElementType();
  int64_t width = element.isInteger(1) ? 1 : (element.getIntOrFloatBitWidth() + 7) / 8;
  return type.getNumElements() * width;
}

/// Extends `life` over every step that uses `buffer`, directly or through views.
void extendOverUses(Value buffer, const llvm::DenseMap<Operation *, int64_t> &stepOf,
                    int64_t endOfProgram, lowering::BufferLife &life) {
  for (Operation *user : buffer.getUsers()) {
    if (auto view = dyn_cast<exec::ViewOp>(user)) {
      extendOverUses(view.getBuffer(), stepOf, endOfProgram, life);
      continue;
    }
    // An output must survive until the caller has copied it out.
    int64_t step = isa<exec::OutputOp>(user) ? endOfProgram : stepOf.lookup(user);
    life.first = std::min(life.first, step);
    life.last = std::max(life.last, step);
  }
}

LogicalResult planFunction(func::FuncOp function) {
  llvm::DenseMap<Operation *, int64_t> stepOf;
  int64_t steps = 0;
  for (Operation &op : function.getBody().front())
    stepOf[&op] = steps++;
  SmallVector<exec::AllocOp> allocs;
  std::vector<lowering::BufferLife> lives;
  function.walk([&](exec::AllocOp alloc) {
    lowering::BufferLife life{byteSize(cast<MemRefType>(alloc.getType())), stepOf[alloc], 0};
    life.last = life.first;
    extendOverUses(alloc.getBuffer(), stepOf, steps, life);
    allocs.push_back(alloc);
    lives.push_back(life);
  });
  lowering::ArenaPlan plan = lowering::planArena(lives);
  if (!lowering::isValidPlan(lives, plan))
    return function.emitError() << "memory plan overlaps live buffers (planner bug)";
  Builder builder(function.getContext());
  for (auto [alloc, offset] : llvm::zip(allocs, plan.offsets))
    alloc.setOffsetAttr(builder.getI64IntegerAttr(offset));
  function->setAttr(exec::kArenaBytesAttrName, builder.getI64IntegerAttr(plan.peakBytes));
  return success();
}

struct PlanMemoryPass : shardc::lowering::impl::PlanMemoryPassBase<PlanMemoryPass> {
  void runOnOperation() override {
    for (func::FuncOp function : getOperation().getOps<func::FuncOp>())
      if (failed(planFunction(function)))
        return signalPassFailure();
  }
};

} // namespace
