//===- MicrobatchInvariant.cpp - values every micro-batch computes alike --===//
#include "passes/Pipeline/MicrobatchInvariant.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace shardc::pipeline {

bool MicrobatchInvariance::operator()(Operation *op) {
  if (auto found = known.find(op); found != known.end())
    return found->second;
  bool same;
  if (isa<graph::ConstantOp>(op))
    same = true;
  else if (isa<graph::WeightOp>(op))
    same = graph::trainRole(op) != graph::kTrainAccumulator;
  else
    // Collectives of such values (a reshard of a weight) are alike too.
    same = (isMemoryEffectFree(op) || isa<dist::DistDialect>(op->getDialect())) &&
           llvm::all_of(op->getOperands(), [&](Value operand) {
             // The step's inputs differ per micro-batch.
             Operation *producer = operand.getDefiningOp();
             return producer && (*this)(producer);
           });
  known[op] = same;
  return same;
}

} // namespace shardc::pipeline
