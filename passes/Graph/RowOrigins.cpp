//===- RowOrigins.cpp - which source rows a view's rows are ---------------===//
#include "passes/Graph/RowOrigins.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::graph {
namespace {

SmallVector<int64_t> unflatten(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    coords[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coords;
}

int64_t flatten(ArrayRef<int64_t> coords, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (auto [coord, size] : llvm::zip(coords, shape))
    flat = flat * size + coord;
  return flat;
}

/// The product of the trailing dims from `from` on.
int64_t trailing(ArrayRef<int64_t> shape, int64_t from) {
  int64_t product = 1;
  for (int64_t d = from; d < int64_t(shape.size()); ++d)
    product *= shape[d];
  return product;
}

/// One row-moving op: the operand its rows come from, the elements at the
/// end of each result row it leaves whole (a multiple of the row size keeps
/// rows whole), and where a result element's coordinates are in the operand.
struct Move {
  Value operand;
  int64_t whole;
  std::function<SmallVector<int64_t>(ArrayRef<int64_t>)> inputCoords;
};

std::optional<Move> transposeMove(TransposeOp op) {
  ArrayRef<int64_t> perm = op.getPerm(), shape = shapeOf(op.getResult());
  int64_t kept = int64_t(perm.size());
  while (kept > 0 && perm[kept - 1] == kept - 1)
    --kept;
  SmallVector<int64_t> permutation(perm);
  return Move{op.getInput(), trailing(shape, kept), [permutation](ArrayRef<int64_t> coords) {
                SmallVector<int64_t> in(coords.size());
                for (auto [d, from] : llvm::enumerate(permutation))
                  in[from] = coords[d];
                return in;
              }};
}

std::optional<Move> sliceMove(SliceOp op) {
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  SmallVector<int64_t> starts(op.getStarts()), steps(op.getSteps());
  int64_t kept = int64_t(out.size());
  while (kept > 0 && out[kept - 1] == in[kept - 1] && starts[kept - 1] == 0 && steps[kept - 1] == 1)
    --kept;
  return Move{op.getInput(), trailing(out, kept), [starts, steps](ArrayRef<int64_t> coords) {
                SmallVector<int64_t> in(coords.size());
                for (size_t d = 0; d < coords.size(); ++d)
                  in[d] = starts[d] + coords[d] * steps[d];
                return in;
              }};
}

std::optional<Move> expandMove(ExpandOp op) {
  SmallVector<int64_t> in(shapeOf(op.getInput()));
  ArrayRef<int64_t> out = shapeOf(op.getResult());
  int64_t lead = int64_t(out.size() - in.size());
  int64_t kept = int64_t(out.size());
  while (kept > lead && in[kept - 1 - lead] == out[kept - 1])
    --kept;
  return Move{op.getInput(), trailing(out, kept), [in, lead](ArrayRef<int64_t> coords) {
                SmallVector<int64_t> from(in.size());
                for (size_t d = 0; d < in.size(); ++d)
                  from[d] = in[d] == 1 ? 0 : coords[d + lead];
                return from;
              }};
}

std::optional<Move> gatherMove(GatherOp op) {
  std::optional<SmallVector<int64_t>> indices = constantInts(op.getIndices());
  if (!indices)
    return std::nullopt;
  ArrayRef<int64_t> data = shapeOf(op.getData());
  int64_t axis = op.getAxis(), size = data[axis];
  int64_t indexRank = int64_t(shapeOf(op.getIndices()).size());
  SmallVector<int64_t> indexShape(shapeOf(op.getIndices()));
  for (int64_t &index : *indices) {
    if (index < -size || index >= size)
      return std::nullopt;
    index = index < 0 ? index + size : index;
  }
  return Move{op.getData(), trailing(data, axis + 1),
              [axis, indexRank, indexShape, values = *indices](ArrayRef<int64_t> coords) {
                SmallVector<int64_t> in(coords.take_front(axis));
                in.push_back(values[flatten(coords.slice(axis, indexRank), indexShape)]);
                in.append(coords.begin() + axis + indexRank, coords.end());
                return in;
              }};
}

std::optional<Move> moveOf(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Move>>(op)
      .Case([](TransposeOp op) { return transposeMove(op); })
      .Case([](SliceOp op) { return sliceMove(op); })
      .Case([](ExpandOp op) { return expandMove(op); })
      .Case([](GatherOp op) { return gatherMove(op); })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

std::optional<SmallVector<int64_t>> constantInts(Value value) {
  DenseElementsAttr attribute;
  if (!value || !matchPattern(value, m_Constant(&attribute)) ||
      !isa<IntegerType>(attribute.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &element : attribute.getValues<APInt>())
    values.push_back(element.getSExtValue());
  // A splat yields one value per element too.
  return values;
}

std::optional<RowOrigins> traceRows(Value value, int64_t rowSize, PassThrough through) {
  int64_t elements = cast<RankedTensorType>(value.getType()).getNumElements();
  if (rowSize <= 0 || elements % rowSize != 0)
    return std::nullopt;
  RowOrigins origins{value, {}};
  for (int64_t row = 0; row < elements / rowSize; ++row)
    origins.rows.push_back(row);
  while (Operation *op = origins.source.getDefiningOp()) {
    if (Value passed = through ? through(op) : Value()) {
      origins.source = passed;
      continue;
    }
    // A reshape keeps the row-major order of the elements: rows stay.
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      origins.source = reshape.getInput();
      continue;
    }
    std::optional<Move> move = moveOf(op);
    if (!move)
      break;
    if (move->whole % rowSize != 0)
      return std::nullopt;
    ArrayRef<int64_t> out = shapeOf(origins.source), in = shapeOf(move->operand);
    for (int64_t &row : origins.rows)
      row = flatten(move->inputCoords(unflatten(row * rowSize, out)), in) / rowSize;
    origins.source = move->operand;
  }
  return origins;
}

} // namespace shardc::graph
