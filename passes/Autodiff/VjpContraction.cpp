//===- VjpContraction.cpp - gradients of linear and matmul ------------------===//
//
// For y = x W (+ b): dx = dy W^T is a linear with the weight read the other
// way round, dW = x^T dy contracts the tokens (every leading dim of x), and
// db sums dy over the tokens. With the weight split over tp by columns
// (Megatron's column-parallel linear), dx contracts the split dim and is a
// partial sum: the sharding rules of these very ops give its all-reduce.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;

LogicalResult linearVjp(VjpCall &call, graph::LinearOp linear) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  const bool transposed = linear.getTransposeWeight();
  Value x = linear.getInput(), weight = linear.getWeight(), dy = call.dy();
  if (call.needed[0])
    call.set(0, b.create<graph::LinearOp>(g.loc(), dy, weight, Value(),
                                          b.getBoolAttr(!transposed)));
  if (call.needed[1]) {
    // [K, N] = x^T dy, or [N, K] = dy^T x when the weight is stored out x in.
    Value xRows = g.rows(x), dyRows = g.rows(dy);
    Value grad = transposed ? g.matmul(g.swapLastTwo(dyRows), xRows)
                            : g.matmul(g.swapLastTwo(xRows), dyRows);
    call.set(1, grad);
  }
  if (linear.getBias() && call.needed[2]) {
    SmallVector<int64_t> tokens;
    for (int64_t dim = 0; dim + 1 < int64_t(shapeOf(dy).size()); ++dim)
      tokens.push_back(dim);
    call.set(2, g.sumToShape(g.reduceSum(dy, tokens, false), shapeOf(linear.getBias())));
  }
  return success();
}

LogicalResult matmulVjp(VjpCall &call, graph::MatMulOp matmul) {
  GradientBuilder &g = call.build;
  Value lhs = matmul.getLhs(), rhs = matmul.getRhs();
  if (shapeOf(lhs).size() < 2 || shapeOf(rhs).size() < 2)
    return call.refuse("a 1-D matmul operand has no gradient rule yet");
  // Batch dims broadcast: each operand's gradient is summed back to its shape.
  if (call.needed[0])
    call.set(0, g.sumToShape(g.matmul(call.dy(), g.swapLastTwo(rhs)), shapeOf(lhs)));
  if (call.needed[1])
    call.set(1, g.sumToShape(g.matmul(g.swapLastTwo(lhs), call.dy()), shapeOf(rhs)));
  return success();
}

} // namespace

std::optional<LogicalResult> vjpContraction(VjpCall &call) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(call.op)
      .Case([&](graph::LinearOp linear) { return linearVjp(call, linear); })
      .Case([&](graph::MatMulOp matmul) { return matmulVjp(call, matmul); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
