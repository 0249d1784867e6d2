//===- PretransposeWeights.cpp - weights stored as the GEMM reads them ----===//
#include "passes/Lowering/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace shardc::lowering {
#define GEN_PASS_DEF_PRETRANSPOSEWEIGHTSPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace shardc::lowering {
namespace {

/// The weight `linear` reads transposed, when its copy can be stored
/// transposed: a 2-D tensor or box of one (repeated blocks and stacked
/// parts are cut in their own layouts). Not a trained weight: the copy
/// would be a second storage the update never writes.
graph::WeightOp transposableWeight(graph::LinearOp linear) {
  if (!linear.getTransposeWeight())
    return {};
  auto weight = linear.getWeight().getDefiningOp<graph::WeightOp>();
  if (!weight || weight.getType().getRank() != 2 || weight.getRepeatBlocks() ||
      weight.getPartOffsets() || weight->hasAttr(graph::kTrainAttrName) ||
      weight->hasAttr(graph::kTransposedAttrName))
    return {};
  return weight;
}

struct PretransposeWeightsPass
    : impl::PretransposeWeightsPassBase<PretransposeWeightsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      llvm::DenseMap<Operation *, Value> transposed; // one copy per weight
      function.walk([&](graph::LinearOp linear) {
        graph::WeightOp weight = transposableWeight(linear);
        if (!weight)
          return;
        Value &copy = transposed[weight];
        if (!copy) {
          OpBuilder builder(weight);
          auto clone = cast<graph::WeightOp>(builder.clone(*weight));
          ArrayRef<int64_t> shape = weight.getType().getShape();
          clone.getResult().setType(RankedTensorType::get(
              {shape[1], shape[0]}, weight.getType().getElementType(), weight.getType().getEncoding()));
          clone->setAttr(graph::kTransposedAttrName, builder.getUnitAttr());
          copy = clone.getResult();
        }
        linear.getWeightMutable().assign(copy);
        linear.setTransposeWeight(false);
      });
      for (auto &[weight, copy] : transposed)
        if (weight->use_empty())
          weight->erase();
    });
  }
};

} // namespace
} // namespace shardc::lowering
