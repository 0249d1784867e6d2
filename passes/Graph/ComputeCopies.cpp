//===- ComputeCopies.cpp - a master's compute-type copy as storage --------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_COMPUTECOPIESPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace {

namespace graph = shardc::graph;

/// NAME.bf16: the copy's name, which its buffer, checkpoint tensor and the
/// stage search's link to its master go by.
std::string copyName(graph::WeightOp master, Type compute) {
  std::string name = master.getName().str() + ".";
  llvm::raw_string_ostream os(name);
  os << compute;
  return name;
}

struct ComputeCopiesPass : graph::impl::ComputeCopiesPassBase<ComputeCopiesPass> {
  void runOnOperation() override {
    SmallVector<graph::WeightOp> masters;
    getOperation().walk([&](graph::WeightOp weight) {
      if (graph::trainRole(weight) == graph::kTrainParam &&
          weight->hasAttr(graph::kComputeTypeAttrName))
        masters.push_back(weight);
    });
    for (graph::WeightOp master : masters)
      if (failed(keepCopy(master)))
        return signalPassFailure();
  }

  LogicalResult keepCopy(graph::WeightOp master) {
    Type compute = master->getAttrOfType<TypeAttr>(graph::kComputeTypeAttrName).getValue();
    SmallVector<graph::AssignOp> writes;
    for (Operation *user : master->getUsers())
      if (auto write = dyn_cast<graph::AssignOp>(user))
        writes.push_back(write);
    if (writes.size() != 1)
      return master.emitOpError() << "is a trained master written " << writes.size()
                                  << " times; expected once";
    // The copy reads the master's stored bytes, converted.
    OpBuilder builder(master);
    builder.setInsertionPointAfter(master);
    auto copy = cast<graph::WeightOp>(builder.clone(*master));
    RankedTensorType masterType = master.getType();
    copy.getResult().setType(masterType.clone(compute));
    copy.setName(copyName(master, compute));
    copy.setStoredTypeAttr(
        TypeAttr::get(master.getStoredType().value_or(masterType.getElementType())));
    copy->setAttr(graph::kTrainAttrName, builder.getStringAttr(graph::kTrainCopy));
    copy->removeAttr(graph::kComputeTypeAttrName);
    // The forward's and backward's reads of the master in the compute type.
    for (Operation *user : llvm::make_early_inc_range(master->getUsers())) {
      auto cast = dyn_cast<graph::CastOp>(user);
      if (cast && cast.getType().getElementType() == compute &&
          graph::phaseOf(cast) != graph::Phase::Optimizer) {
        cast.getResult().replaceAllUsesWith(copy.getResult());
        cast.erase();
      }
    }
    // The update refreshes the copy from the new master.
    graph::AssignOp write = writes.front();
    builder.setInsertionPointAfter(write);
    auto refreshed =
        builder.create<graph::CastOp>(write.getLoc(), copy.getType(), write.getValue());
    auto refresh = builder.create<graph::AssignOp>(write.getLoc(), copy.getResult(), refreshed);
    StringAttr phase = builder.getStringAttr(graph::phaseName(graph::Phase::Optimizer));
    refreshed->setAttr(graph::kPhaseAttrName, phase);
    refresh->setAttr(graph::kPhaseAttrName, phase);
    return success();
  }
};

} // namespace
