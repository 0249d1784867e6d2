//===- DensifySelections.cpp - NonZero routing with static shapes ---------===//
//
// Models exported from transformers 4.4x route tokens to experts with NonZero:
// per expert, the (slot, token) pairs that chose it are selected, their tokens
// gathered, run through the expert, weighted, and added back into the output
// rows with a scatter (index_add). The number of selected pairs is known only
// at run time. Every selected entry is treated alike until the scatter, so the
// selection is replaced by every coordinate of its mask (a constant grid):
// all entries run, and at the scatter the unselected entries' updates become
// zeros and the scatter adds. Selected entries contribute what they did, the
// others +0.0: the result is the original's, bit for bit.
//
// The rewrite is sound only if no op mixes entries before the scatter, so the
// entry dim is followed through every use and anything else is refused with
// the op that breaks it; graph.nonzero never survives this pass.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/NodeLocation.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_DENSIFYSELECTIONSPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

int64_t rankOf(Value value) { return cast<RankedTensorType>(value.getType()).getRank(); }
/// An op that uses the entries in a way the rewrite cannot keep exact.
struct Refusal {
  Operation *op;
  std::string why;
};

/// Follows the entry dim of a selection through the ops after it: each value
/// derived from the selection has one dim that indexes its entries.
class EntryFlow {
public:
  /// The scatters where entries go back into dense tensors.
  SmallVector<Operation *> scatters;
  /// The entry dim of every value derived from the selection.
  llvm::DenseMap<Value, int64_t> entryDim;

  /// Follows `selection` (entries on dim 1) to its scatters; the first op
  /// that mixes entries or lets them escape, if any.
  std::optional<Refusal> follow(NonZeroOp selection) {
    entryDim[selection.getResult()] = 1;
    for (Operation *op = selection->getNextNode(); op; op = op->getNextNode()) {
      if (!llvm::any_of(op->getOperands(), [&](Value v) { return entryDim.count(v); }))
        continue;
      if (isa<ScatterElementsOp, ScatterNdOp>(op)) {
        if (auto refusal = checkScatter(op))
          return refusal;
        scatters.push_back(op);
        continue;
      }
      FailureOr<int64_t> dim = resultDim(op);
      if (failed(dim))
        return refusal;
      for (Value result : op->getResults())
        entryDim[result] = *dim;
    }
    return std::nullopt;
  }

private:
  std::optional<Refusal> refusal;

  FailureOr<int64_t> refuse(Operation *op, const Twine &why) {
    refusal = Refusal{op, why.str()};
    return failure();
  }

  std::optional<int64_t> dimOf(Value value) const {
    auto found = entryDim.find(value);
    return found == entryDim.end() ? std::nullopt : std::optional<int64_t>(found->second);
  }

  /// The entry dim of `op`'s results, from its operands'.
  FailureOr<int64_t> resultDim(Operation *op) {
    return llvm::TypeSwitch<Operation *, FailureOr<int64_t>>(op)
        .Case<NegOp, AbsOp, SqrtOp, RsqrtOp, ReciprocalOp, ExpOp, LogOp, CosOp, SinOp, ErfOp,
              TanhOp, SigmoidOp, ReluOp, SiluOp, NotOp, GeluOp, FloorOp, CeilOp, RoundOp, SignOp,
              IsNanOp, IsInfOp, ModOp, CastOp, AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, AndOp,
              OrOp, PowOp, CompareOp, WhereOp, ExpandOp>(
            [&](Operation *op) { return broadcastDim(op); })
        .Case([&](TransposeOp op) -> FailureOr<int64_t> {
          auto at = llvm::find(op.getPerm(), *dimOf(op.getInput()));
          return int64_t(at - op.getPerm().begin());
        })
        .Case([&](ReshapeOp op) { return reshapeDim(op); })
        .Case([&](SliceOp op) -> FailureOr<int64_t> {
          int64_t dim = *dimOf(op.getInput());
          if (shapeOf(op.getResult())[dim] != shapeOf(op.getInput())[dim])
            return refuse(op, "slices the entries");
          return dim;
        })
        .Case([&](SplitOp op) { return unlessOn(op, op.getAxis(), *dimOf(op.getInput())); })
        .Case([&](ConcatOp op) { return concatDim(op); })
        .Case([&](GatherOp op) { return gatherDim(op); })
        .Case([&](GatherNdOp op) { return gatherNdDim(op); })
        .Case([&](MatMulOp op) { return matmulDim(op); })
        .Case([&](LinearOp op) -> FailureOr<int64_t> {
          std::optional<int64_t> dim = dimOf(op.getInput());
          if (!dim || *dim == rankOf(op.getInput()) - 1 ||
              llvm::any_of(op->getOperands().drop_front(), [&](Value v) { return dimOf(v); }))
            return refuse(op, "contracts over the entries");
          return *dim;
        })
        .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(
            [&](auto op) { return reduceDim(op, op.getAxes(), op.getKeepdims()); })
        .Case([&](SoftmaxOp op) { return unlessOn(op, op.getAxis(), *dimOf(op.getInput())); })
        .Case([&](TopKOp op) { return unlessOn(op, op.getAxis(), *dimOf(op.getInput())); })
        .Case([&](CumSumOp op) { return unlessOn(op, op.getAxis(), *dimOf(op.getInput())); })
        .Case([&](func::ReturnOp op) { return refuse(op, "makes the entries a model output"); })
        .Default([&](Operation *op) { return refuse(op, "is not known to keep the entries apart"); });
  }

  /// Ops along `axis` that keep every other dim: fine unless it is the entries'.
  FailureOr<int64_t> unlessOn(Operation *op, int64_t axis, int64_t dim) {
    if (axis == dim)
      return refuse(op, "works across the entries");
    return dim;
  }

  /// Elementwise ops broadcast their operands against the result's shape:
  /// the entries must sit on one result dim, which no other operand varies on.
  FailureOr<int64_t> broadcastDim(Operation *op) {
    int64_t resultRank = rankOf(op->getResult(0));
    std::optional<int64_t> dim;
    for (Value operand : op->getOperands()) {
      std::optional<int64_t> own = dimOf(operand);
      if (!own)
        continue;
      int64_t aligned = *own + resultRank - rankOf(operand);
      if (dim && *dim != aligned)
        return refuse(op, "pairs entries with other entries");
      if (shapeOf(op->getResult(0))[aligned] != shapeOf(operand)[*own])
        return refuse(op, "broadcasts the entries");
      dim = aligned;
    }
    return uniformElsewhere(op, op->getOperands(), *dim);
  }

  /// The operands that are not per entry must not vary along the entries'
  /// result dim `dim` (they broadcast from the right).
  FailureOr<int64_t> uniformElsewhere(Operation *op, ValueRange operands, int64_t dim) {
    int64_t resultRank = rankOf(op->getResult(0));
    for (Value operand : operands) {
      int64_t own = dim - (resultRank - rankOf(operand));
      if (!dimOf(operand) && own >= 0 && shapeOf(operand)[own] != 1)
        return refuse(op, "combines the entries with a value that is not per entry");
    }
    return dim;
  }

  /// A reshape keeps the entries on one dim when the elements before it are
  /// the same in number on both sides.
  FailureOr<int64_t> reshapeDim(ReshapeOp op) {
    int64_t dim = *dimOf(op.getInput());
    ArrayRef<int64_t> from = shapeOf(op.getInput()), to = shapeOf(op.getResult());
    int64_t before = 1;
    for (int64_t d = 0; d < dim; ++d)
      before *= from[d];
    int64_t prefix = 1;
    for (int64_t d = 0; d < int64_t(to.size()); ++d) {
      if (prefix == before && to[d] == from[dim])
        return d;
      prefix *= to[d];
    }
    return refuse(op, "merges or splits the entries' dim");
  }

  FailureOr<int64_t> concatDim(ConcatOp op) {
    std::optional<int64_t> dim = dimOf(op.getInputs().front());
    if (!dim || llvm::any_of(op.getInputs(), [&](Value v) { return dimOf(v) != dim; }))
      return refuse(op, "joins entries with a value that is not per entry");
    return unlessOn(op, op.getAxis(), *dim);
  }

  FailureOr<int64_t> gatherDim(GatherOp op) {
    std::optional<int64_t> data = dimOf(op.getData()), indices = dimOf(op.getIndices());
    int64_t axis = op.getAxis();
    if (data && indices)
      return refuse(op, "indexes entries by entries");
    if (indices)
      return axis + *indices;
    if (*data == axis)
      return refuse(op, "picks among the entries");
    return *data < axis ? *data : *data - 1 + rankOf(op.getIndices());
  }

  FailureOr<int64_t> gatherNdDim(GatherNdOp op) {
    std::optional<int64_t> indices = dimOf(op.getIndices());
    if (dimOf(op.getData()) || op.getBatchDims() != 0 || *indices == rankOf(op.getIndices()) - 1)
      return refuse(op, "indexes across the entries");
    return *indices;
  }

  /// numpy matmul [..., M, K] x [..., K, N]: entries on M, N or a batch dim
  /// that the other operand does not vary on.
  FailureOr<int64_t> matmulDim(MatMulOp op) {
    Value lhs = op.getLhs(), rhs = op.getRhs();
    int64_t resultRank = rankOf(op.getResult());
    if (rankOf(lhs) < 2 || rankOf(rhs) < 2)
      return refuse(op, "is a matrix-vector product over the entries");
    std::optional<int64_t> dim;
    for (auto [operand, kept, contracted] :
         {std::tuple{lhs, rankOf(lhs) - 2, rankOf(lhs) - 1},
          std::tuple{rhs, rankOf(rhs) - 1, rankOf(rhs) - 2}}) {
      std::optional<int64_t> own = dimOf(operand);
      if (!own)
        continue;
      if (*own == contracted)
        return refuse(op, "contracts over the entries");
      int64_t aligned = *own + resultRank - rankOf(operand);
      if (dim && (*dim != aligned || *own == kept))
        return refuse(op, "pairs entries with other entries");
      dim = aligned;
    }
    if (*dim < resultRank - 2) // a batch dim: the other operand broadcasts along it
      return uniformElsewhere(op, op->getOperands(), *dim);
    return *dim;
  }

  FailureOr<int64_t> reduceDim(Operation *op, ArrayRef<int64_t> axes, bool keepdims) {
    int64_t dim = *dimOf(op->getOperand(0));
    if (llvm::is_contained(axes, dim))
      return refuse(op, "reduces over the entries");
    if (keepdims)
      return dim;
    return dim - llvm::count_if(axes, [&](int64_t axis) { return axis < dim; });
  }

  /// The scatter must put each entry's updates at that entry's indices, into
  /// a tensor that is not itself per entry, and tolerate zero updates.
  std::optional<Refusal> checkScatter(Operation *op) {
    Value data = op->getOperand(0), indices = op->getOperand(1), updates = op->getOperand(2);
    auto refusal = [&](const char *why) { return std::optional<Refusal>(Refusal{op, why}); };
    if (dimOf(data) || !dimOf(indices) || dimOf(updates) != dimOf(indices))
      return refusal("does not scatter each entry's updates at its own indices");
    if (auto elements = dyn_cast<ScatterElementsOp>(op); elements && int64_t(elements.getAxis()) != *dimOf(indices))
      return refusal("scatters along another dim than the entries'");
    if (auto nd = dyn_cast<ScatterNdOp>(op); nd && *dimOf(indices) == rankOf(indices) - 1)
      return refusal("takes its index tuples across the entries");
    auto reduction = op->getAttrOfType<ScatterReductionAttr>("reduction").getValue();
    // Without a reduction, the selected targets are distinct (ONNX leaves
    // repeats undefined): adding into zeros writes the same values.
    if (reduction == ScatterReduction::none ? splatValue(data) != 0.0
                                            : reduction != ScatterReduction::add)
      return refusal("writes into a tensor that is not zeros without adding");
    return std::nullopt;
  }
};

/// The coordinates of every element of `shape`, in row-major order: [rank, n].
DenseElementsAttr everyCoordinate(RankedTensorType gridType, ArrayRef<int64_t> shape) {
  int64_t count = gridType.getDimSize(1);
  SmallVector<int64_t> grid(shape.size() * count);
  for (int64_t flat = 0; flat < count; ++flat)
    for (int64_t d = int64_t(shape.size()) - 1, rest = flat; d >= 0; --d) {
      grid[d * count + flat] = rest % shape[d];
      rest /= shape[d];
    }
  return DenseElementsAttr::get(gridType, ArrayRef<int64_t>(grid));
}

/// Replaces `selection` by every coordinate and masks the scatters' updates
/// of the entries whose mask element is zero.
void densify(NonZeroOp selection, const EntryFlow &flow) {
  OpBuilder builder(selection);
  Location location = selection.getLoc();
  Value mask = selection.getInput();
  auto maskType = cast<RankedTensorType>(mask.getType());
  auto gridType = cast<RankedTensorType>(selection.getType());
  Value grid = builder.create<ConstantOp>(location, everyCoordinate(gridType, maskType.getShape()));
  auto boolType = builder.getI1Type();
  Value selected = mask;
  if (maskType.getElementType() != boolType)
    selected = builder.create<CastOp>(location, maskType.clone(boolType), mask);
  int64_t count = gridType.getDimSize(1);
  auto flatType = RankedTensorType::get({count}, boolType);
  if (selected.getType() != flatType)
    selected = builder.create<ReshapeOp>(location, flatType, selected);
  selection.getResult().replaceAllUsesWith(grid);
  selection.erase();

  for (Operation *scatter : flow.scatters) {
    builder.setInsertionPoint(scatter);
    Value updates = scatter->getOperand(2);
    auto updatesType = cast<RankedTensorType>(updates.getType());
    SmallVector<int64_t> maskShape(updatesType.getRank(), 1);
    maskShape[flow.entryDim.lookup(updates)] = count;
    Value perEntry = builder.create<ReshapeOp>(
        location, RankedTensorType::get(maskShape, boolType), selected);
    auto scalarType = RankedTensorType::get({}, updatesType.getElementType());
    Value zero = builder.create<ConstantOp>(
        location, cast<ElementsAttr>(builder.getZeroAttr(scalarType)));
    Value masked = builder.create<WhereOp>(location, perEntry, updates, zero);
    scatter->setOperand(2, masked);
    scatter->setAttr("reduction",
                     ScatterReductionAttr::get(builder.getContext(), ScatterReduction::add));
  }
}

struct DensifySelectionsPass
    : shardc::graph::impl::DensifySelectionsPassBase<DensifySelectionsPass> {
  void runOnOperation() override {
    SmallVector<NonZeroOp> selections;
    getOperation().walk([&](NonZeroOp op) { selections.push_back(op); });
    for (NonZeroOp selection : selections) {
      EntryFlow flow;
      if (std::optional<Refusal> refusal = flow.follow(selection)) {
        // One line: the refusing op is named by its ONNX node, if it has one.
        std::string node = onnxNodeNames(refusal->op->getLoc());
        selection.emitError() << "NonZero selects a number of elements known only at run time; "
                                 "shardc compiles it when each selected entry is used on its own "
                                 "and scattered back (MoE routing), but "
                              << (node.empty() ? "" : "node '" + node + "' ") << "("
                              << refusal->op->getName().stripDialect() << ") " << refusal->why;
        return signalPassFailure();
      }
      densify(selection, flow);
    }
  }
};

} // namespace
