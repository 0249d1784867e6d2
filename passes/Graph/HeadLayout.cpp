//===- HeadLayout.cpp - attention operands with batch and heads apart -----===//
#include "passes/Graph/HeadLayout.h"

#include "passes/Graph/Matchers.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;

namespace shardc::graph {
namespace {

Value reshapeTo(OpBuilder &builder, Location location, Value input, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorType(input).getElementType());
  return builder.create<ReshapeOp>(location, type, input);
}

/// [B*H, S, D] = reshape([B, H, S, D]).
Value fromHeadMajor(Value merged, ArrayRef<int64_t> shape) {
  auto reshape = producer<ReshapeOp>(merged);
  if (!reshape)
    return {};
  ArrayRef<int64_t> source = tensorType(reshape.getInput()).getShape();
  if (source.size() != 4 || source[0] * source[1] != shape[0] || source[2] != shape[1] ||
      source[3] != shape[2])
    return {};
  return reshape.getInput();
}

/// [B*H, S, D] = transpose(reshape([S, B, H*D] -> [S, B*H, D]), (1, 0, 2)):
/// torch's MultiheadAttention on a sequence-major projection.
Value fromSequenceMajor(OpBuilder &builder, Location location, Value merged,
                        ArrayRef<int64_t> shape) {
  auto transpose = producer<TransposeOp>(merged);
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0, 2})
    return {};
  auto reshape = producer<ReshapeOp>(transpose.getInput());
  if (!reshape)
    return {};
  ArrayRef<int64_t> source = tensorType(reshape.getInput()).getShape();
  int64_t sequence = shape[1], depth = shape[2];
  if (source.size() != 3 || source[0] != sequence || source[2] % depth != 0)
    return {};
  int64_t batch = source[1], heads = source[2] / depth;
  if (batch * heads != shape[0])
    return {};
  Value split = reshapeTo(builder, location, reshape.getInput(), {sequence, batch, heads, depth});
  return builder.create<TransposeOp>(location, split, ArrayRef<int64_t>{1, 2, 0, 3});
}

} // namespace

Value unfoldHeads(OpBuilder &builder, Location location, Value merged,
                  std::optional<MergedHeads> hint) {
  ArrayRef<int64_t> shape = tensorType(merged).getShape();
  if (shape.size() != 3)
    return {};
  if (Value unfolded = fromHeadMajor(merged, shape))
    return unfolded;
  if (Value unfolded = fromSequenceMajor(builder, location, merged, shape))
    return unfolded;
  if (!hint || hint->batch * hint->heads != shape[0])
    return {};
  return reshapeTo(builder, location, merged, {hint->batch, hint->heads, shape[1], shape[2]});
}

void replaceMergedHeads(OpBuilder &builder, Value merged, Value unfolded) {
  Location location = merged.getLoc();
  Value fallback;
  for (OpOperand &use : llvm::make_early_inc_range(merged.getUses())) {
    Operation *user = use.getOwner();
    if (isa<ReshapeOp>(user)) {
      // Same elements in the same order: reshape the unfolded value instead.
      use.set(unfolded);
      continue;
    }
    auto transpose = dyn_cast<TransposeOp>(user);
    if (transpose && transpose.getPerm() == ArrayRef<int64_t>{1, 0, 2} &&
        llvm::all_of(transpose->getUsers(), [](Operation *op) { return isa<ReshapeOp>(op); })) {
      // [S, B*H, D] has the elements of [S, B, H, D] in the same order.
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(transpose);
      Value sequenceMajor = builder.create<TransposeOp>(transpose.getLoc(), unfolded,
                                                        ArrayRef<int64_t>{2, 0, 1, 3});
      for (OpOperand &reshapeUse : llvm::make_early_inc_range(transpose->getUses()))
        reshapeUse.set(sequenceMajor);
      continue;
    }
    if (!fallback) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfterValue(unfolded);
      fallback = reshapeTo(builder, location, unfolded, tensorType(merged).getShape());
    }
    use.set(fallback);
  }
}

} // namespace shardc::graph
