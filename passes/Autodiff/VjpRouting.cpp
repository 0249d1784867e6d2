//===- VjpRouting.cpp - gradients of top-k and routed experts ---------------===//
//
// top-k: the values' gradient goes back to the positions they were taken
// from (a scatter-add into zeros); the indices are integers and carry none.
//
// graph.moe: the rule writes the op's dense equivalent, every expert on every
// token with a combine weight per (token, expert),
//
//   C[t, e] = sum over j of gates[t, j] * (indices[t, j] == e) * kept(t, j)
//   y[t]    = sum over e of C[t, e] * expert_e(x[t])
//
// with batched matmuls over the stacked [E, ...] weights, and differentiates
// it with the rules of those ops. The combine weight is zero for an expert a
// token did not choose and for an entry the capacity dropped, so:
// unselected experts get no gradient from a token, the gradient reaches the
// gates of the selected slots only (<dy[t], expert(x[t])>), and a dropped
// entry gets none, as in the forward. The dense ops are the ones the sharding
// search knows (matmul batched over the expert dim, reductions); they compute
// E / k times the routed forward's expert FLOPs (docs/training.md says why).
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;
using graph::tensorType;

/// Every op a builder inserts while it is attached, in order.
struct InsertedOps : OpBuilder::Listener {
  SmallVector<Operation *> ops;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.push_back(op);
  }
};

LogicalResult topkVjp(VjpCall &call, graph::TopKOp topk) {
  GradientBuilder &g = call.build;
  Value zeros = g.zeros(tensorType(topk.getInput()));
  call.set(0, g.b().create<graph::ScatterElementsOp>(g.loc(), zeros, topk.getIndices(),
                                                     call.resultGrads[0], topk.getAxis(),
                                                     graph::ScatterReduction::add));
  return success();
}

/// The experts' activation as its graph op (the verifier allows these four).
Value activation(GradientBuilder &g, StringRef name, Value h) {
  OpBuilder &b = g.b();
  if (name == "silu")
    return b.create<graph::SiluOp>(g.loc(), h);
  if (name == "relu")
    return b.create<graph::ReluOp>(g.loc(), h);
  assert((name == "gelu" || name == "gelu_tanh") && "graph.moe's verifier checks the activation");
  return b.create<graph::GeluOp>(g.loc(), h, b.getBoolAttr(name == "gelu_tanh"));
}

/// [T, k, E]: 1 where slot j of token t chose expert e and its entry is kept
/// (docs/experts.md: per expert, the first `capacity` entries in (token,
/// slot) order), else 0; in `gates`' element type.
Value keptChoices(GradientBuilder &g, graph::MoeOp moe) {
  OpBuilder &b = g.b();
  Value indices = moe.getIndices();
  ArrayRef<int64_t> slots = shapeOf(indices);
  int64_t tokens = slots[0], k = slots[1], experts = moe.getExperts();
  Type element = tensorType(moe.getGates()).getElementType();
  SmallVector<int64_t> numbers;
  for (int64_t e = 0; e < experts; ++e)
    numbers.push_back(e);
  auto iotaType = RankedTensorType::get({1, 1, experts}, b.getI64Type());
  Value iota = b.create<graph::ConstantOp>(
      g.loc(), cast<ElementsAttr>(DenseElementsAttr::get(iotaType, ArrayRef<int64_t>(numbers))));
  Value chosen = g.compare(graph::ComparePredicate::eq, g.reshape(indices, {tokens, k, 1}), iota);
  auto choiceType = RankedTensorType::get({tokens, k, experts}, element);
  Value choices = b.create<graph::CastOp>(g.loc(), choiceType, chosen);
  if (moe.getCapacity() == 0)
    return choices;
  // An entry's rank among its expert's entries, 1-based, in (token, slot) order.
  Value flat = g.reshape(choices, {tokens * k, experts});
  Value rank = b.create<graph::CumSumOp>(g.loc(), flat, b.getI64IntegerAttr(0),
                                         b.getBoolAttr(false), b.getBoolAttr(false));
  Value within = g.compare(graph::ComparePredicate::le, rank,
                           g.scalar(double(moe.getCapacity()), element));
  Value kept = g.mul(flat, b.create<graph::CastOp>(g.loc(), tensorType(flat), within));
  return g.reshape(kept, {tokens, k, experts});
}

/// The dense equivalent of `moe` (see the file's comment); returns y.
Value denseExperts(GradientBuilder &g, graph::MoeOp moe) {
  Value x = moe.getInput(), gates = moe.getGates();
  ArrayRef<int64_t> slots = shapeOf(gates);
  int64_t tokens = slots[0], k = slots[1], experts = moe.getExperts();
  // C^T as [E, T, 1], to scale each expert's [T, H] output.
  Value choices = keptChoices(g, moe);
  Value combine = g.reduceSum(g.mul(g.reshape(gates, {tokens, k, 1}), choices), {1}, false);
  Value perExpert = g.reshape(g.transpose(combine, {1, 0}), {experts, tokens, 1});
  // Stacked weights as [E, in, out]; x [T, H] broadcasts over the experts.
  auto inOut = [&](Value weight) {
    return moe.getTransposeWeights() ? g.swapLastTwo(weight) : weight;
  };
  ValueRange weights = moe.getWeights();
  Value up = g.matmul(x, inOut(weights[moe.isGated() ? 1 : 0]));
  Value hidden =
      moe.isGated()
          ? g.mul(activation(g, moe.getActivation(), g.matmul(x, inOut(weights[0]))), up)
          : activation(g, moe.getActivation(), up);
  Value out = g.matmul(hidden, inOut(moe.getDownWeight()));
  return g.reduceSum(g.mul(out, perExpert), {0}, false);
}

LogicalResult moeVjp(VjpCall &call, graph::MoeOp moe) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  if (moe.getExpertAxes())
    return call.refuse("it is already partitioned; the gradient is taken of the global program");
  InsertedOps inserted;
  OpBuilder::Listener *previous = b.getListener();
  b.setListener(&inserted);
  Value dense = denseExperts(g, moe);
  b.setListener(previous);

  // Reverse mode over the dense ops, from the moe's result gradient to its
  // operands', with the rules of those ops.
  llvm::DenseSet<Value> active;
  for (auto [index, operand] : llvm::enumerate(moe->getOperands()))
    if (call.needed[index])
      active.insert(operand);
  for (Operation *op : inserted.ops)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());
  llvm::DenseMap<Value, Value> grads;
  grads[dense] = call.dy();
  for (Operation *op : llvm::reverse(inserted.ops)) {
    Value grad = op->getNumResults() == 1 ? grads.lookup(op->getResult(0)) : Value();
    if (!grad)
      continue;
    SmallVector<bool> wanted;
    for (Value operand : op->getOperands())
      wanted.push_back(active.contains(operand));
    if (llvm::none_of(wanted, [](bool w) { return w; }))
      continue;
    VjpCall inner{op, grad, wanted, g, {}};
    if (failed(buildVjp(inner)))
      return failure();
    for (auto [operand, operandGrad] : llvm::zip(op->getOperands(), inner.operandGrads)) {
      if (!operandGrad)
        continue;
      Value &sum = grads[operand];
      sum = sum ? g.add(sum, operandGrad) : operandGrad;
    }
  }
  for (auto [index, operand] : llvm::enumerate(moe->getOperands()))
    call.set(index, grads.lookup(operand));
  return success();
}

} // namespace

std::optional<LogicalResult> vjpRouting(VjpCall &call) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(call.op)
      .Case([&](graph::TopKOp topk) { return topkVjp(call, topk); })
      .Case([&](graph::MoeOp moe) { return moeVjp(call, moe); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
