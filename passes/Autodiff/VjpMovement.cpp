//===- VjpMovement.cpp - gradients of data movement and reductions ----------===//
//
// Movement ops move the gradient back the way the data came: a reshape or
// transpose is undone, a slice's gradient is the slice padded with zeros, a
// concat's is split, a broadcast's is summed. An embedding lookup (gather)
// adds each row's gradient into the rows it read: a scatter-add, so a token
// read twice gets both contributions.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/VjpRules.h"

#include "dialects/Graph/TypeUtils.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;
using graph::tensorType;

SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inverse(perm.size());
  for (auto [index, dim] : llvm::enumerate(perm))
    inverse[dim] = int64_t(index);
  return inverse;
}

/// `grad` with `size` zeros along `dim`.
Value zerosAlong(GradientBuilder &g, Value grad, int64_t dim, int64_t size) {
  SmallVector<int64_t> shape(shapeOf(grad));
  shape[dim] = size;
  return g.zeros(RankedTensorType::get(shape, tensorType(grad).getElementType()));
}

/// The k elements of `grad` along `dim` spread `step` apart with zeros
/// between them: k (step - 1) + 1 elements. (Strided slices: GPT-J's
/// interleaved rotary halves, a strided convolution's taps.)
Value spread(GradientBuilder &g, Value grad, int64_t dim, int64_t step) {
  OpBuilder &b = g.b();
  SmallVector<int64_t> shape(shapeOf(grad));
  int64_t kept = shape[dim];
  SmallVector<int64_t> split(shape);
  split.insert(split.begin() + dim + 1, 1);
  Value column = g.reshape(grad, split);
  Value padded = b.create<graph::ConcatOp>(
      g.loc(), ValueRange{column, zerosAlong(g, column, dim + 1, step - 1)},
      b.getI64IntegerAttr(dim + 1));
  SmallVector<int64_t> merged(shape);
  merged[dim] = kept * step;
  Value spreadOut = g.reshape(padded, merged);
  SmallVector<int64_t> starts(shape.size(), 0), ends(merged), steps(shape.size(), 1);
  ends[dim] = (kept - 1) * step + 1;
  return b.create<graph::SliceOp>(g.loc(), spreadOut, b.getDenseI64ArrayAttr(starts),
                                  b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps));
}

LogicalResult sliceVjp(VjpCall &call, graph::SliceOp slice) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  if (llvm::any_of(slice.getSteps(), [](int64_t step) { return step < 1; }))
    return call.refuse("a slice with a negative step has no gradient rule yet");
  // Pad one dim at a time with zeros before and after the kept range.
  Value grad = call.dy();
  ArrayRef<int64_t> full = shapeOf(slice.getInput());
  for (int64_t dim = 0; dim < int64_t(full.size()); ++dim) {
    int64_t step = slice.getSteps()[dim];
    if (step > 1 && shapeOf(grad)[dim] > 1)
      grad = spread(g, grad, dim, step);
    int64_t start = slice.getStarts()[dim], kept = shapeOf(grad)[dim];
    int64_t after = full[dim] - start - kept;
    if (start == 0 && after == 0)
      continue;
    SmallVector<Value> pieces;
    auto zerosOf = [&](int64_t size) { return zerosAlong(g, grad, dim, size); };
    if (start > 0)
      pieces.push_back(zerosOf(start));
    pieces.push_back(grad);
    if (after > 0)
      pieces.push_back(zerosOf(after));
    grad = b.create<graph::ConcatOp>(g.loc(), pieces, b.getI64IntegerAttr(dim));
  }
  call.set(0, grad);
  return success();
}

/// gather(data, indices, axis): the gradient's rows added into zeros of
/// data's shape at the indices (scatter_nd with add), with `axis` moved to
/// the front and back again.
LogicalResult gatherVjp(VjpCall &call, graph::GatherOp gather) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  Value data = gather.getData(), indices = gather.getIndices();
  int64_t axis = int64_t(gather.getAxis());
  ArrayRef<int64_t> dataShape = shapeOf(data), indexShape = shapeOf(indices);
  int64_t dataRank = int64_t(dataShape.size()), indexRank = int64_t(indexShape.size());
  // data with `axis` first.
  SmallVector<int64_t> dataPerm{axis};
  for (int64_t dim = 0; dim < dataRank; ++dim)
    if (dim != axis)
      dataPerm.push_back(dim);
  // dy [data[:axis], I, data[axis+1:]] with the index dims first.
  SmallVector<int64_t> gradPerm;
  for (int64_t dim = axis; dim < axis + indexRank; ++dim)
    gradPerm.push_back(dim);
  for (int64_t dim = 0; dim < axis; ++dim)
    gradPerm.push_back(dim);
  for (int64_t dim = axis + indexRank; dim < int64_t(shapeOf(call.dy()).size()); ++dim)
    gradPerm.push_back(dim);
  Value updates = g.transpose(call.dy(), gradPerm);
  SmallVector<int64_t> tupleShape(indexShape);
  tupleShape.push_back(1);
  Value tuples = g.reshape(indices, tupleShape);
  SmallVector<int64_t> movedShape;
  for (int64_t dim : dataPerm)
    movedShape.push_back(dataShape[dim]);
  Value zeros = g.zeros(RankedTensorType::get(movedShape, tensorType(data).getElementType()));
  Value scattered =
      b.create<graph::ScatterNdOp>(g.loc(), zeros, tuples, updates, graph::ScatterReduction::add);
  call.set(0, g.transpose(scattered, inversePermutation(dataPerm)));
  return success();
}

/// reduce_sum / reduce_mean: the gradient broadcast back over the reduced
/// axes (divided by their element count for a mean).
LogicalResult reduceVjp(VjpCall &call, Value input, ArrayRef<int64_t> axes, bool mean) {
  GradientBuilder &g = call.build;
  ArrayRef<int64_t> shape = shapeOf(input);
  SmallVector<int64_t> kept(shape);
  int64_t count = 1;
  for (int64_t axis : axes) {
    kept[axis] = 1;
    count *= shape[axis];
  }
  Value grad = g.expand(g.reshape(call.dy(), kept), shape);
  call.set(0, mean ? g.scale(grad, 1.0 / double(count)) : grad);
  return success();
}

} // namespace

std::optional<LogicalResult> vjpMovement(VjpCall &call) {
  GradientBuilder &g = call.build;
  OpBuilder &b = g.b();
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(call.op)
      .Case([&](graph::ReshapeOp reshape) {
        call.set(0, g.reshape(call.dy(), shapeOf(reshape.getInput())));
        return success();
      })
      .Case([&](graph::TransposeOp transpose) {
        call.set(0, g.transpose(call.dy(), inversePermutation(transpose.getPerm())));
        return success();
      })
      .Case([&](graph::ExpandOp expand) {
        call.set(0, g.sumToShape(call.dy(), shapeOf(expand.getInput())));
        return success();
      })
      .Case([&](graph::SliceOp slice) { return sliceVjp(call, slice); })
      .Case([&](graph::ConcatOp concat) {
        SmallVector<int64_t> sizes;
        for (Value input : concat.getInputs())
          sizes.push_back(shapeOf(input)[concat.getAxis()]);
        auto pieces = b.create<graph::SplitOp>(g.loc(), call.dy(), concat.getAxis(), sizes);
        for (auto [index, piece] : llvm::enumerate(pieces.getResults()))
          call.set(index, piece);
        return success();
      })
      .Case([&](graph::SplitOp split) {
        call.set(0, b.create<graph::ConcatOp>(g.loc(), call.resultGrads,
                                              b.getI64IntegerAttr(split.getAxis())));
        return success();
      })
      .Case([&](graph::GatherOp gather) { return gatherVjp(call, gather); })
      .Case([&](graph::ReduceSumOp reduce) {
        return reduceVjp(call, reduce.getInput(), reduce.getAxes(), false);
      })
      .Case([&](graph::ReduceMeanOp reduce) {
        return reduceVjp(call, reduce.getInput(), reduce.getAxes(), true);
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace shardc::autodiff
