//===- RaiseRotary.cpp - rotary embeddings in rotate-half form ------------===//
//
//   x * cos + concat(-x[..., D/2:], x[..., :D/2]) * sin
//
//===----------------------------------------------------------------------===//
#include "passes/Graph/Matchers.h"
#include "passes/Graph/Passes.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_RAISEROTARYPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

using namespace shardc::graph;

namespace {

/// The x of `slice` when it takes x[..., begin:end] with unit steps and every
/// other dim whole.
Value lastDimSliceOf(Value value, int64_t begin, int64_t end) {
  auto slice = producer<SliceOp>(value);
  if (!slice)
    return {};
  ArrayRef<int64_t> shape = slice.getInput().getType().getShape();
  int64_t last = shape.size() - 1;
  for (int64_t d = 0; d <= last; ++d) {
    int64_t wantBegin = d == last ? begin : 0, wantEnd = d == last ? end : shape[d];
    if (slice.getStarts()[d] != wantBegin || slice.getEnds()[d] != wantEnd ||
        slice.getSteps()[d] != 1)
      return {};
  }
  return slice.getInput();
}

/// rotate_half(x) = concat(-x2, x1); returns x.
Value rotateHalfOf(ConcatOp concat) {
  if (concat.getInputs().size() != 2 || int64_t(concat.getAxis()) != concat.getType().getRank() - 1)
    return {};
  int64_t features = concat.getType().getShape().back(), half = features / 2;
  auto negated = producer<NegOp>(concat.getInputs()[0]);
  if (features % 2 || !negated)
    return {};
  Value x = lastDimSliceOf(negated.getInput(), half, features);
  if (!x || lastDimSliceOf(concat.getInputs()[1], 0, half) != x)
    return {};
  return x;
}

void raiseRotary(ConcatOp concat) {
  Value x = rotateHalfOf(concat);
  if (!x)
    return;
  for (Operation *user : concat->getUsers()) {
    auto sinProduct = dyn_cast<MulOp>(user);
    Value sin = sinProduct ? otherOperand(sinProduct, concat) : Value();
    auto sum = sin ? dyn_cast_or_null<AddOp>(soleUser(sinProduct)) : AddOp();
    auto cosProduct = sum ? producer<MulOp>(otherOperand(sum, sinProduct)) : MulOp();
    Value cos = cosProduct ? otherOperand(cosProduct, x) : Value();
    if (!cos)
      continue;
    OpBuilder builder(sum);
    if (auto rotary = createIfValid<RotaryOp>(builder, sum.getLoc(), ValueRange{x, cos, sin}))
      if (replaceIfSameType(sum, rotary))
        return;
  }
}

struct RaiseRotaryPass : shardc::graph::impl::RaiseRotaryPassBase<RaiseRotaryPass> {
  void runOnOperation() override {
    SmallVector<ConcatOp> concats;
    getOperation().walk([&](ConcatOp concat) { concats.push_back(concat); });
    for (ConcatOp concat : concats)
      raiseRotary(concat);
    eraseDeadOps(getOperation());
  }
};

} // namespace
