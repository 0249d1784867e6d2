//===- RaiseMlp.cpp - feed-forward blocks into graph.composite "mlp" ------===//
//
//   linear -> act -> linear                     (GPT-2, BERT, nn.Transformer)
//   linear(act(linear_gate(x)) * linear_up(x))   (Llama's SwiGLU and kin)
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Outlining.h"
#include "passes/Graph/Passes.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEMLPPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// The activation op producing `value` when it is used once (by the MLP).
Operation *activationOf(Value value) {
  Operation *op = value.getDefiningOp();
  if (!op || !value.hasOneUse() || !isa<GeluOp, ReluOp, SiluOp>(op))
    return nullptr;
  return op;
}

/// The linear producing `value` when it is used once (by the MLP).
LinearOp soleLinear(Value value) {
  auto linear = producer<LinearOp>(value);
  return linear && value.hasOneUse() ? linear : LinearOp();
}

void raiseMlp(LinearOp down) {
  Value hidden = down.getInput();
  if (Operation *activation = activationOf(hidden)) {
    if (LinearOp up = soleLinear(activation->getOperand(0)))
      outlineComposite("mlp", {up, activation, down}, down);
    return;
  }
  auto gate = producer<MulOp>(hidden);
  if (!gate || !hidden.hasOneUse())
    return;
  for (auto [gated, plain] : {std::pair(gate.getLhs(), gate.getRhs()),
                              std::pair(gate.getRhs(), gate.getLhs())}) {
    Operation *activation = activationOf(gated);
    LinearOp gateLinear = activation ? soleLinear(activation->getOperand(0)) : LinearOp();
    LinearOp upLinear = soleLinear(plain);
    if (gateLinear && upLinear && gateLinear.getInput() == upLinear.getInput()) {
      outlineComposite("mlp", {gateLinear, activation, upLinear, gate, down}, down);
      return;
    }
  }
}

struct RaiseMlpPass : shardc::graph::impl::RaiseMlpPassBase<RaiseMlpPass> {
  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) { linears.push_back(linear); });
    // Outlining erases the group, whose root (the current anchor) comes last
    // in the block: visiting in block order never meets an erased anchor.
    for (LinearOp linear : linears)
      raiseMlp(linear);
  }
};

} // namespace
