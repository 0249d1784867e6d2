//===- RaiseLinear.cpp - fully connected layers from matmul + add ---------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISELINEARPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

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
  if (linear)
    replaceIfSameType(root, linear);
}

struct RaiseLinearPass : shardc::graph::impl::RaiseLinearPassBase<RaiseLinearPass> {
  void runOnOperation() override {
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp matmul) { matmuls.push_back(matmul); });
    for (MatMulOp matmul : matmuls)
      raiseLinear(matmul);
    eraseDeadOps(getOperation());
  }
};

} // namespace
