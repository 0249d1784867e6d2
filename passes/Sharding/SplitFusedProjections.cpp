//===- SplitFusedProjections.cpp - one linear layer per part of a fused one -===//
#include "passes/Sharding/Passes.h"

#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::sharding {
#define GEN_PASS_DEF_SPLITFUSEDPROJECTIONSPASS
#include "passes/Sharding/Passes.h.inc"
} // namespace shardc::sharding

namespace shardc::sharding {
namespace {

/// One consumer's view of the fused output: features [begin, end).
struct Part {
  Value result;
  int64_t begin, end;
};

/// The parts `linear`'s users take along its last dim, or nothing when a
/// user does anything else with it.
std::optional<SmallVector<Part>> partsOf(graph::LinearOp linear) {
  int64_t last = linear.getType().getRank() - 1;
  ArrayRef<int64_t> shape = linear.getType().getShape();
  SmallVector<Part> parts;
  for (Operation *user : linear->getUsers()) {
    if (auto split = dyn_cast<graph::SplitOp>(user); split && split.getAxis() == last) {
      int64_t begin = 0;
      for (auto [result, size] : llvm::zip(split.getResults(), split.getSizes())) {
        parts.push_back({result, begin, begin + size});
        begin += size;
      }
      continue;
    }
    auto slice = dyn_cast<graph::SliceOp>(user);
    if (!slice)
      return std::nullopt;
    for (int64_t dim = 0; dim < last; ++dim)
      if (slice.getStarts()[dim] != 0 || slice.getEnds()[dim] < shape[dim] ||
          slice.getSteps()[dim] != 1)
        return std::nullopt;
    if (slice.getSteps()[last] != 1)
      return std::nullopt;
    parts.push_back(
        {slice.getResult(), slice.getStarts()[last], std::min(slice.getEnds()[last], shape[last])});
  }
  if (parts.size() < 2)
    return std::nullopt;
  return parts;
}

/// The box of `weight` covering [begin, end) along `dim`.
Value boxOf(OpBuilder &builder, graph::WeightOp weight, int64_t dim, int64_t begin, int64_t end) {
  RankedTensorType type = weight.getType();
  SmallVector<int64_t> shape(type.getShape()), stored(type.getShape()), offsets(type.getRank(), 0);
  if (weight.getStoredShape()) {
    stored.assign(weight.getStoredShape()->begin(), weight.getStoredShape()->end());
    offsets.assign(weight.getBoxOffsets()->begin(), weight.getBoxOffsets()->end());
  }
  shape[dim] = end - begin;
  offsets[dim] += begin;
  auto box = builder.create<graph::WeightOp>(
      weight.getLoc(), RankedTensorType::get(shape, type.getElementType()), weight.getName(),
      weight.getFile(), weight.getOffset(), weight.getSize(), builder.getDenseI64ArrayAttr(stored),
      builder.getDenseI64ArrayAttr(offsets), weight.getStoredTypeAttr());
  return box.getResult();
}

void split(graph::LinearOp linear, ArrayRef<Part> parts) {
  auto weight = linear.getWeight().getDefiningOp<graph::WeightOp>();
  auto bias = linear.getBias() ? linear.getBias().getDefiningOp<graph::WeightOp>() : nullptr;
  OpBuilder builder(linear);
  int64_t featureDim = linear.getTransposeWeight() ? 0 : 1;
  for (Part part : parts) {
    Value partWeight = boxOf(builder, weight, featureDim, part.begin, part.end);
    Value partBias = bias ? boxOf(builder, bias, 0, part.begin, part.end) : Value();
    auto piece =
        builder.create<graph::LinearOp>(linear.getLoc(), part.result.getType(), linear.getInput(),
                                        partWeight, partBias, linear.getTransposeWeightAttr());
    part.result.replaceAllUsesWith(piece.getResult());
  }
  for (Operation *user : llvm::to_vector(linear->getUsers()))
    user->erase();
  linear.erase();
  for (Operation *whole : {weight.getOperation(), bias ? bias.getOperation() : nullptr})
    if (whole && whole->use_empty())
      whole->erase();
}

struct SplitFusedProjectionsPass : impl::SplitFusedProjectionsPassBase<SplitFusedProjectionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<graph::LinearOp, SmallVector<Part>>> work;
    getOperation().walk([&](graph::LinearOp linear) {
      bool weightsKnown = linear.getWeight().getDefiningOp<graph::WeightOp>() &&
                          (!linear.getBias() || linear.getBias().getDefiningOp<graph::WeightOp>());
      if (!weightsKnown || linear.getBias() && linear.getBias().getType().getRank() != 1)
        return;
      if (auto parts = partsOf(linear))
        work.emplace_back(linear, std::move(*parts));
    });
    for (auto &[linear, parts] : work)
      split(linear, parts);
  }
};

} // namespace
} // namespace shardc::sharding
