//===- RaiseLinear.cpp - fully connected layers from matmul + add ---------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/UnflattenTokens.h"
#include "passes/Graph/Passes.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISELINEARPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// linear(reshape(x)) where the reshape only merges x's leading dims and
/// every user reshapes the result again (Hugging Face's Conv1D:
/// x.view(-1, in) @ W + b, then .view(..., out)) is the linear on x: the
/// [B*S, N] intermediate disappears, so batch and sequence stay apart for
/// sharding and an activation sits directly between two linears (the MLP
/// pattern). A linear on tokens flattened for other reasons (MoE dispatch)
/// is left as it is.
void sinkMergingReshape(LinearOp linear) {
  auto reshape = producer<ReshapeOp>(linear.getInput());
  if (!reshape || linear->use_empty() ||
      !llvm::all_of(linear->getUsers(), [](Operation *user) { return isa<ReshapeOp>(user); }))
    return;
  ArrayRef<int64_t> merged = tensorType(reshape).getShape();
  ArrayRef<int64_t> source = tensorType(reshape.getInput()).getShape();
  if (merged.size() != 2)
    return;
  // The source dims before `split` multiply to the rows, the rest to the
  // features (an attention output [B, S, H, D] -> [B*S, H*D] merges both).
  size_t split = 0;
  int64_t rows = 1;
  while (split < source.size() && rows < merged[0])
    rows *= source[split++];
  if (split < 2 || rows != merged[0])
    return;
  OpBuilder builder(linear);
  SmallVector<Value> operands(linear->getOperands());
  operands[0] = reshape.getInput();
  if (split + 1 != source.size()) {
    SmallVector<int64_t> unmerged(source.take_front(split));
    unmerged.push_back(merged[1]);
    operands[0] = builder.create<ReshapeOp>(
        reshape.getLoc(), RankedTensorType::get(unmerged, tensorType(reshape).getElementType()),
        reshape.getInput());
  }
  auto unmerged = createIfValid<LinearOp>(builder, linear.getLoc(), operands,
                                          linear->getAttrs());
  if (!unmerged)
    return;
  // A reshape of the merged result has the same elements as one of the
  // unmerged result.
  for (Operation *user : llvm::to_vector(linear->getUsers())) {
    auto next = cast<ReshapeOp>(user);
    if (next.getType() == unmerged.getType())
      next.replaceAllUsesWith(unmerged.getResult());
    else
      next.getInputMutable().assign(unmerged);
  }
}

void raiseLinear(MatMulOp matmul) {
  Value weight = matmul.getRhs();
  bool transposed = false;
  // nn.Linear keeps W as [out, in]; exporters leave the transpose when they
  // don't fold it (or Gemm has transB), and weights never fold.
  if (auto transpose = producer<TransposeOp>(weight);
      transpose && transpose.getPerm() == ArrayRef<int64_t>{1, 0}) {
    weight = transpose.getInput();
    transposed = true;
  }
  if (!isParameter(weight) || tensorType(weight).getRank() != 2 ||
      !isa<FloatType>(tensorType(weight).getElementType()))
    return;
  Value root = matmul, bias;
  if (auto add = dyn_cast_or_null<AddOp>(soleUser(matmul))) {
    Value candidate = otherOperand(add, matmul);
    int64_t features = tensorType(matmul).getShape().back();
    if (isParameter(candidate) &&
        tensorType(candidate).getShape() == ArrayRef<int64_t>{features}) {
      bias = candidate;
      root = add;
    }
  }
  OpBuilder builder(root.getDefiningOp());
  SmallVector<Value> operands = {matmul.getLhs(), weight};
  if (bias)
    operands.push_back(bias);
  auto linear = createIfValid<LinearOp>(
      builder, root.getLoc(), operands,
      {builder.getNamedAttr("transpose_weight", builder.getBoolAttr(transposed))});
  if (linear && replaceIfSameType(root, linear))
    sinkMergingReshape(linear);
}

struct RaiseLinearPass : shardc::graph::impl::RaiseLinearPassBase<RaiseLinearPass> {
  void runOnOperation() override {
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp matmul) { matmuls.push_back(matmul); });
    for (MatMulOp matmul : matmuls)
      raiseLinear(matmul);
    eraseDeadOps(getOperation());
    unflattenTokenRegions(getOperation());
  }
};

} // namespace
