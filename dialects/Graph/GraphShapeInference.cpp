//===- GraphShapeInference.cpp - result types of graph ops ----------------===//
//
// Each op's inferReturnTypes both computes its result types and is its shape
// check: the importer calls it before building an op (so a bad ONNX node is
// reported at its location instead of crashing a builder) and the verifier
// calls it on parsed IR. Messages carry the concrete numbers.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace shardc::graph;

namespace {

/// Reports `message` at `location` the way emitOpError would, naming the op.
template <typename OpTy>
LogicalResult fail(std::optional<Location> location, const Twine &message) {
  return emitOptionalError(location, "'", OpTy::getOperationName(), "' op ", message);
}

RankedTensorType withShape(RankedTensorType type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

template <typename OpTy>
LogicalResult checkAxis(std::optional<Location> location, int64_t axis, int64_t rank,
                        StringRef what = "axis") {
  if (axis < 0 || axis >= rank)
    return fail<OpTy>(location, Twine(what) + " out of range; expected 0 <= " + what + " < " +
                                    Twine(rank) + " but got " + Twine(axis));
  return success();
}

template <typename OpTy>
LogicalResult checkSameElementType(std::optional<Location> location, Type a, Type b) {
  if (getElementTypeOrSelf(a) == getElementTypeOrSelf(b))
    return success();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "element types differ; expected " << getElementTypeOrSelf(a) << " but got "
     << getElementTypeOrSelf(b);
  return fail<OpTy>(location, os.str());
}

template <typename OpTy>
FailureOr<SmallVector<int64_t>> broadcastOrFail(std::optional<Location> location,
                                                ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  if (auto shape = broadcastShapes(a, b))
    return *shape;
  (void)fail<OpTy>(location, "shapes do not broadcast; " + formatShape(a) + " against " +
                                 formatShape(b));
  return failure();
}

/// Unary ops: the result is the operand's type.
template <typename OpTy>
LogicalResult inferSameAsInput(typename OpTy::Adaptor adaptor, SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  return success();
}

/// Binary elementwise ops with one element type, broadcasting.
template <typename OpTy>
LogicalResult inferBroadcast(std::optional<Location> location, Value lhs, Value rhs,
                             Type resultElement, SmallVectorImpl<Type> &types) {
  auto shape = broadcastOrFail<OpTy>(location, tensorType(lhs).getShape(),
                                     tensorType(rhs).getShape());
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, resultElement));
  return success();
}

template <typename OpTy>
LogicalResult inferBinary(std::optional<Location> location, typename OpTy::Adaptor adaptor,
                          SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType<OpTy>(location, adaptor.getLhs().getType(),
                                        adaptor.getRhs().getType())))
    return failure();
  return inferBroadcast<OpTy>(location, adaptor.getLhs(), adaptor.getRhs(),
                              tensorType(adaptor.getLhs()).getElementType(), types);
}

/// Checks that `scale` (a norm's per-feature parameter) broadcasts onto the
/// normalized dims `input[axis:]` without growing them.
template <typename OpTy>
LogicalResult checkNormParameter(std::optional<Location> location, StringRef name, Value param,
                                 RankedTensorType input, int64_t axis) {
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  ArrayRef<int64_t> shape = tensorType(param).getShape();
  if (!broadcastsTo(shape, normalized))
    return fail<OpTy>(location, Twine(name) + " shape does not fit the normalized dims; expected " +
                                    "to broadcast to " + formatShape(normalized) + " but got " +
                                    formatShape(shape));
  return checkSameElementType<OpTy>(location, input, param.getType());
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define SHARDC_SAME_AS_INPUT(OP)                                                            \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location>, Adaptor adaptor, \
                                     SmallVectorImpl<Type> &types) {                        \
    return inferSameAsInput<OP>(adaptor, types);                                            \
  }
SHARDC_SAME_AS_INPUT(NegOp)
SHARDC_SAME_AS_INPUT(AbsOp)
SHARDC_SAME_AS_INPUT(SqrtOp)
SHARDC_SAME_AS_INPUT(RsqrtOp)
SHARDC_SAME_AS_INPUT(ReciprocalOp)
SHARDC_SAME_AS_INPUT(ExpOp)
SHARDC_SAME_AS_INPUT(LogOp)
SHARDC_SAME_AS_INPUT(CosOp)
SHARDC_SAME_AS_INPUT(SinOp)
SHARDC_SAME_AS_INPUT(ErfOp)
SHARDC_SAME_AS_INPUT(TanhOp)
SHARDC_SAME_AS_INPUT(SigmoidOp)
SHARDC_SAME_AS_INPUT(ReluOp)
SHARDC_SAME_AS_INPUT(SiluOp)
SHARDC_SAME_AS_INPUT(NotOp)
SHARDC_SAME_AS_INPUT(FloorOp)
SHARDC_SAME_AS_INPUT(CeilOp)
SHARDC_SAME_AS_INPUT(RoundOp)
SHARDC_SAME_AS_INPUT(SignOp)
SHARDC_SAME_AS_INPUT(GeluOp)
SHARDC_SAME_AS_INPUT(SoftmaxOp)
SHARDC_SAME_AS_INPUT(TriluOp)
#undef SHARDC_SAME_AS_INPUT

#define SHARDC_BINARY(OP)                                                                   \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> location,       \
                                     Adaptor adaptor, SmallVectorImpl<Type> &types) {       \
    return inferBinary<OP>(location, adaptor, types);                                       \
  }
SHARDC_BINARY(AddOp)
SHARDC_BINARY(SubOp)
SHARDC_BINARY(MulOp)
SHARDC_BINARY(DivOp)
SHARDC_BINARY(MaxOp)
SHARDC_BINARY(MinOp)
SHARDC_BINARY(AndOp)
SHARDC_BINARY(OrOp)
SHARDC_BINARY(ModOp)
#undef SHARDC_BINARY

/// IsNaN and IsInf: a bool of the input's shape.
#define SHARDC_CLASSIFY(OP)                                                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *context, std::optional<Location>,                \
                                     Adaptor adaptor, SmallVectorImpl<Type> &types) {              \
    types.push_back(RankedTensorType::get(tensorType(adaptor.getInput()).getShape(),               \
                                          IntegerType::get(context, 1)));                          \
    return success();                                                                              \
  }
SHARDC_CLASSIFY(IsNanOp)
SHARDC_CLASSIFY(IsInfOp)
#undef SHARDC_CLASSIFY

LogicalResult PowOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                      Adaptor adaptor, SmallVectorImpl<Type> &types) {
  // ONNX Pow lets the exponent have its own type; the result takes the base's.
  return inferBroadcast<PowOp>(location, adaptor.getLhs(), adaptor.getRhs(),
                               tensorType(adaptor.getLhs()).getElementType(), types);
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(checkSameElementType<CompareOp>(location, adaptor.getLhs().getType(),
                                             adaptor.getRhs().getType())))
    return failure();
  return inferBroadcast<CompareOp>(location, adaptor.getLhs(), adaptor.getRhs(),
                                   IntegerType::get(context, 1), types);
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType onTrue = tensorType(adaptor.getTrueValue());
  if (failed(checkSameElementType<WhereOp>(location, onTrue, adaptor.getFalseValue().getType())))
    return failure();
  auto values = broadcastOrFail<WhereOp>(location, onTrue.getShape(),
                                         tensorType(adaptor.getFalseValue()).getShape());
  if (failed(values))
    return failure();
  auto all = broadcastOrFail<WhereOp>(location, tensorType(adaptor.getCondition()).getShape(),
                                      *values);
  if (failed(all))
    return failure();
  types.push_back(withShape(onTrue, *all));
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and reductions
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = tensorType(adaptor.getLhs()), rhs = tensorType(adaptor.getRhs());
  if (failed(checkSameElementType<MatMulOp>(location, lhs, rhs)))
    return failure();
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return fail<MatMulOp>(location, "operands must have rank >= 1; got " +
                                        formatShape(lhs.getShape()) + " and " +
                                        formatShape(rhs.getShape()));
  // Numpy promotes a 1-D lhs to [1, K] and a 1-D rhs to [K, 1], then drops the 1.
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool vectorLhs = a.size() == 1, vectorRhs = b.size() == 1;
  if (vectorLhs)
    a.insert(a.begin(), 1);
  if (vectorRhs)
    b.push_back(1);
  int64_t k = a.back(), kRhs = b[b.size() - 2];
  if (k != kRhs)
    return fail<MatMulOp>(location, "contracting dimensions differ; expected " + Twine(k) +
                                        " but got " + Twine(kRhs) + " (" +
                                        formatShape(lhs.getShape()) + " @ " +
                                        formatShape(rhs.getShape()) + ")");
  auto batch = broadcastOrFail<MatMulOp>(location, ArrayRef<int64_t>(a).drop_back(2),
                                         ArrayRef<int64_t>(b).drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape = *batch;
  if (!vectorLhs)
    shape.push_back(a[a.size() - 2]);
  if (!vectorRhs)
    shape.push_back(b.back());
  types.push_back(withShape(lhs, shape));
  return success();
}

template <typename OpTy>
static LogicalResult inferReduce(std::optional<Location> location,
                                 typename OpTy::Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  for (size_t i = 0; i < axes.size(); ++i) {
    if (failed(checkAxis<OpTy>(location, axes[i], input.getRank())))
      return failure();
    if (i > 0 && axes[i] <= axes[i - 1])
      return fail<OpTy>(location, "axes must be strictly increasing; got " + formatShape(axes));
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    bool reduced = llvm::is_contained(axes, d);
    if (!reduced)
      shape.push_back(input.getDimSize(d));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  types.push_back(withShape(input, shape));
  return success();
}

#define SHARDC_REDUCE(OP)                                                                   \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> location,       \
                                     Adaptor adaptor, SmallVectorImpl<Type> &types) {       \
    return inferReduce<OP>(location, adaptor, types);                                       \
  }
SHARDC_REDUCE(ReduceSumOp)
SHARDC_REDUCE(ReduceMeanOp)
SHARDC_REDUCE(ReduceMaxOp)
SHARDC_REDUCE(ReduceMinOp)
#undef SHARDC_REDUCE

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  if (failed(checkAxis<TopKOp>(location, axis, input.getRank())))
    return failure();
  if (k < 0 || k > input.getDimSize(axis))
    return fail<TopKOp>(location, "k out of range; expected 0 <= k <= " +
                                      Twine(input.getDimSize(axis)) + " but got " + Twine(k));
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = k;
  types.push_back(withShape(input, shape));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult NonZeroOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  types.push_back(RankedTensorType::get({input.getRank(), input.getNumElements()},
                                        IntegerType::get(context, 64)));
  return success();
}

LogicalResult CumSumOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  if (failed(checkAxis<CumSumOp>(location, adaptor.getAxis(), input.getRank())))
    return failure();
  types.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(input.getRank(), false);
  bool valid = static_cast<int64_t>(perm.size()) == input.getRank();
  for (int64_t p : perm) {
    if (!valid || p < 0 || p >= input.getRank() || seen[p]) {
      valid = false;
      break;
    }
    seen[p] = true;
  }
  if (!valid)
    return fail<TransposeOp>(location, "perm is not a permutation of the " +
                                           Twine(input.getRank()) + " dims; got " +
                                           formatShape(perm));
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(input.getDimSize(p));
  types.push_back(withShape(input, shape));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  ArrayRef<int64_t> starts = adaptor.getStarts(), ends = adaptor.getEnds(),
                    steps = adaptor.getSteps();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(starts.size()) != rank || static_cast<int64_t>(ends.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank)
    return fail<SliceOp>(location, "needs one start, end and step per dim; expected " +
                                       Twine(rank) + " but got " + Twine(starts.size()) + ", " +
                                       Twine(ends.size()) + " and " + Twine(steps.size()));
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d), start = starts[d], end = ends[d], step = steps[d];
    if (step == 0)
      return fail<SliceOp>(location, "step of dim " + Twine(d) + " is 0");
    // Normalized bounds: forward slices live in [0, size], backward ones in [-1, size - 1].
    int64_t low = step > 0 ? 0 : -1, high = step > 0 ? size : size - 1;
    if (start < low || start > high || end < low || end > high)
      return fail<SliceOp>(location, "bounds of dim " + Twine(d) + " out of range; expected " +
                                         Twine(low) + " <= start, end <= " + Twine(high) +
                                         " but got " + Twine(start) + ", " + Twine(end));
    int64_t span = step > 0 ? end - start : start - end;
    int64_t stride = step > 0 ? step : -step;
    shape.push_back(span <= 0 ? 0 : (span + stride - 1) / stride);
  }
  types.push_back(withShape(input, shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return fail<ConcatOp>(location, "needs at least one input");
  RankedTensorType first = tensorType(adaptor.getInputs().front());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<ConcatOp>(location, axis, first.getRank())))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [index, value] : llvm::enumerate(adaptor.getInputs().drop_front())) {
    RankedTensorType type = tensorType(value);
    if (failed(checkSameElementType<ConcatOp>(location, first, type)))
      return failure();
    bool compatible = type.getRank() == first.getRank();
    for (int64_t d = 0; compatible && d < first.getRank(); ++d)
      compatible = d == axis || type.getDimSize(d) == first.getDimSize(d);
    if (!compatible)
      return fail<ConcatOp>(location, "input " + Twine(index + 1) + " does not fit along axis " +
                                          Twine(axis) + "; expected " +
                                          formatShape(first.getShape()) + " apart from the axis but got " +
                                          formatShape(type.getShape()));
    shape[axis] += type.getDimSize(axis);
  }
  types.push_back(withShape(first, shape));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<SplitOp>(location, axis, input.getRank())))
    return failure();
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return fail<SplitOp>(location, "sizes must not be negative; got " +
                                         formatShape(adaptor.getSizes()));
    total += size;
  }
  if (total != input.getDimSize(axis))
    return fail<SplitOp>(location, "sizes must add up to the axis; expected " +
                                       Twine(input.getDimSize(axis)) + " but got " + Twine(total));
  for (int64_t size : adaptor.getSizes()) {
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    types.push_back(withShape(input, shape));
  }
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = tensorType(adaptor.getData());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<GatherOp>(location, axis, data.getRank())))
    return failure();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, tensorType(adaptor.getIndices()).getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  types.push_back(withShape(data, shape));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                  Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  RankedTensorType updates = tensorType(adaptor.getUpdates());
  if (failed(checkAxis<ScatterElementsOp>(location, adaptor.getAxis(), data.getRank())) ||
      failed(checkSameElementType<ScatterElementsOp>(location, data, updates)))
    return failure();
  if (indices.getShape() != updates.getShape())
    return fail<ScatterElementsOp>(location, "indices and updates shapes differ; expected " +
                                                 formatShape(indices.getShape()) + " but got " +
                                                 formatShape(updates.getShape()));
  if (indices.getRank() != data.getRank())
    return fail<ScatterElementsOp>(location, "indices rank differs from data rank; expected " +
                                                 Twine(data.getRank()) + " but got " +
                                                 Twine(indices.getRank()));
  types.push_back(data);
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<GatherElementsOp>(location, axis, data.getRank())))
    return failure();
  if (indices.getRank() != data.getRank())
    return fail<GatherElementsOp>(location, "indices rank differs from data rank; expected " +
                                                Twine(data.getRank()) + " but got " +
                                                Twine(indices.getRank()));
  // Like torch.gather (and onnxruntime), indices may be smaller than data
  // outside the axis: they then read a corner of it.
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return fail<GatherElementsOp>(
          location, "indices " + formatShape(indices.getShape()) + " do not fit data " +
                        formatShape(data.getShape()) + " outside axis " + Twine(axis));
  types.push_back(withShape(data, indices.getShape()));
  return success();
}

LogicalResult GatherNdOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  int64_t batch = adaptor.getBatchDims(), rank = data.getRank(), indexRank = indices.getRank();
  if (rank < 1 || indexRank < 1)
    return fail<GatherNdOp>(location, "data and indices must have rank >= 1; got " +
                                          formatShape(data.getShape()) + " and " +
                                          formatShape(indices.getShape()));
  if (batch < 0 || batch >= std::min(rank, indexRank))
    return fail<GatherNdOp>(location, "batch_dims out of range; expected 0 <= batch_dims < " +
                                          Twine(std::min(rank, indexRank)) + " but got " +
                                          Twine(batch));
  if (data.getShape().take_front(batch) != indices.getShape().take_front(batch))
    return fail<GatherNdOp>(
        location, "batch dims differ; expected " + formatShape(data.getShape().take_front(batch)) +
                      " but got " + formatShape(indices.getShape().take_front(batch)));
  int64_t k = indices.getShape().back();
  if (k < 1 || k > rank - batch)
    return fail<GatherNdOp>(
        location, "index tuples out of range; expected 1 <= " + Twine("indices.shape[-1] <= ") +
                      Twine(rank - batch) + " but got " + Twine(k));
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(batch + k));
  types.push_back(withShape(data, shape));
  return success();
}

LogicalResult ScatterNdOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType data = tensorType(adaptor.getData());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  RankedTensorType updates = tensorType(adaptor.getUpdates());
  if (failed(checkSameElementType<ScatterNdOp>(location, data, updates)))
    return failure();
  if (data.getRank() < 1 || indices.getRank() < 1)
    return fail<ScatterNdOp>(location, "data and indices must have rank >= 1; got " +
                                           formatShape(data.getShape()) + " and " +
                                           formatShape(indices.getShape()));
  int64_t k = indices.getShape().back();
  if (k < 0 || k > data.getRank())
    return fail<ScatterNdOp>(
        location, "index tuples out of range; expected 0 <= " + Twine("indices.shape[-1] <= ") +
                      Twine(data.getRank()) + " but got " + Twine(k));
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (updates.getShape() != ArrayRef<int64_t>(expected))
    return fail<ScatterNdOp>(location, "updates shape differs from indices.shape[:-1] + " +
                                           Twine("data.shape[k:]; expected ") +
                                           formatShape(expected) + " but got " +
                                           formatShape(updates.getShape()));
  types.push_back(data);
  return success();
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType weight = tensorType(adaptor.getWeight());
  if (failed(checkSameElementType<LinearOp>(location, input, weight)))
    return failure();
  if (input.getRank() < 1 || weight.getRank() != 2)
    return fail<LinearOp>(location, "expects input rank >= 1 and a 2-D weight; got " +
                                        formatShape(input.getShape()) + " and " +
                                        formatShape(weight.getShape()));
  bool transposed = adaptor.getTransposeWeight();
  int64_t k = weight.getDimSize(transposed ? 1 : 0), n = weight.getDimSize(transposed ? 0 : 1);
  if (input.getShape().back() != k)
    return fail<LinearOp>(location, "input features differ from the weight's; expected " +
                                        Twine(k) + " but got " + Twine(input.getShape().back()));
  if (Value bias = adaptor.getBias()) {
    ArrayRef<int64_t> biasShape = tensorType(bias).getShape();
    if (biasShape.size() != 1 || biasShape[0] != n)
      return fail<LinearOp>(location, "bias shape differs from the output features; expected [" +
                                          Twine(n) + "] but got " + formatShape(biasShape));
  }
  SmallVector<int64_t> shape(input.getShape());
  shape.back() = n;
  types.push_back(withShape(input, shape));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<LayerNormOp>(location, axis, input.getRank())) ||
      failed(checkNormParameter<LayerNormOp>(location, "scale", adaptor.getScale(), input, axis)))
    return failure();
  if (Value bias = adaptor.getBias())
    if (failed(checkNormParameter<LayerNormOp>(location, "bias", bias, input, axis)))
      return failure();
  types.push_back(input);
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<RmsNormOp>(location, axis, input.getRank())) ||
      failed(checkNormParameter<RmsNormOp>(location, "scale", adaptor.getScale(), input, axis)))
    return failure();
  types.push_back(input);
  return success();
}

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType q = tensorType(adaptor.getQuery()), k = tensorType(adaptor.getKey()),
                   v = tensorType(adaptor.getValue());
  if (failed(checkSameElementType<AttentionOp>(location, q, k)) ||
      failed(checkSameElementType<AttentionOp>(location, q, v)))
    return failure();
  int64_t rank = q.getRank();
  if (rank < 3 || k.getRank() != rank || v.getRank() != rank)
    return fail<AttentionOp>(location, "query, key and value must share a rank >= 3; got " +
                                           formatShape(q.getShape()) + ", " +
                                           formatShape(k.getShape()) + " and " +
                                           formatShape(v.getShape()));
  ArrayRef<int64_t> batch = q.getShape().drop_back(3);
  if (k.getShape().drop_back(3) != batch || v.getShape().drop_back(3) != batch)
    return fail<AttentionOp>(location, "batch dims differ; expected " + formatShape(batch) +
                                           " for key and value but got " +
                                           formatShape(k.getShape().drop_back(3)) + " and " +
                                           formatShape(v.getShape().drop_back(3)));
  int64_t headsQ = q.getDimSize(rank - 3), headsKv = k.getDimSize(rank - 3);
  if (v.getDimSize(rank - 3) != headsKv)
    return fail<AttentionOp>(location, "key and value head counts differ; expected " +
                                           Twine(headsKv) + " but got " +
                                           Twine(v.getDimSize(rank - 3)));
  if (headsKv == 0 || headsQ % headsKv != 0)
    return fail<AttentionOp>(location, "query heads must be a multiple of key/value heads; got " +
                                           Twine(headsQ) + " and " + Twine(headsKv));
  if (q.getShape().back() != k.getShape().back())
    return fail<AttentionOp>(location, "query and key head sizes differ; expected " +
                                           Twine(q.getShape().back()) + " but got " +
                                           Twine(k.getShape().back()));
  int64_t seqQ = q.getDimSize(rank - 2), seqKv = k.getDimSize(rank - 2);
  if (v.getDimSize(rank - 2) != seqKv)
    return fail<AttentionOp>(location, "key and value sequence lengths differ; expected " +
                                           Twine(seqKv) + " but got " +
                                           Twine(v.getDimSize(rank - 2)));
  SmallVector<int64_t> scores(batch);
  scores.append({headsQ, seqQ, seqKv});
  if (Value mask = adaptor.getMask()) {
    RankedTensorType maskType = tensorType(mask);
    Type element = maskType.getElementType();
    if (!element.isInteger(1) && element != q.getElementType())
      return fail<AttentionOp>(location, "mask must be boolean or of the query's element type");
    if (!broadcastsTo(maskType.getShape(), scores))
      return fail<AttentionOp>(location, "mask does not broadcast to the scores; expected " +
                                             formatShape(scores) + " but got " +
                                             formatShape(maskType.getShape()));
  }
  SmallVector<int64_t> shape(batch);
  shape.append({headsQ, seqQ, v.getShape().back()});
  types.push_back(withShape(q, shape));
  return success();
}

LogicalResult MoeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                      Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType indices = tensorType(adaptor.getIndices());
  RankedTensorType gates = tensorType(adaptor.getGates());
  if (failed(checkSameElementType<MoeOp>(location, input, gates)))
    return failure();
  if (input.getRank() != 2 || indices.getRank() != 2 || indices.getShape() != gates.getShape() ||
      indices.getDimSize(0) != input.getDimSize(0))
    return fail<MoeOp>(location, "expects input [T, H] with indices and gates [T, k]; got " +
                                     formatShape(input.getShape()) + ", " +
                                     formatShape(indices.getShape()) + " and " +
                                     formatShape(gates.getShape()));
  ValueRange weights = adaptor.getWeights();
  if (weights.size() != 2 && weights.size() != 3)
    return fail<MoeOp>(location, "expects (gate, up, down) or (up, down) expert weights; got " +
                                     Twine(weights.size()));
  if (!adaptor.getExpertsAttr() || !adaptor.getActivationAttr())
    return fail<MoeOp>(location, "needs the experts and activation attributes");
  // Attributes left at their defaults may be absent here (ops built from a
  // list of attributes): read them as attributes.
  bool transposed = adaptor.getTransposeWeightsAttr() && adaptor.getTransposeWeightsAttr().getValue();
  int64_t capacity = adaptor.getCapacityAttr() ? adaptor.getCapacityAttr().getInt() : 0;
  // [experts, in, out] per projection ("out x in" when transposed).
  int64_t hidden = input.getDimSize(1), local = tensorType(weights[0]).getDimSize(0);
  int64_t ffn = -1;
  for (auto [index, weight] : llvm::enumerate(weights)) {
    RankedTensorType type = tensorType(weight);
    if (failed(checkSameElementType<MoeOp>(location, input, type)))
      return failure();
    bool down = index + 1 == weights.size();
    if (type.getRank() != 3 || type.getDimSize(0) != local)
      return fail<MoeOp>(location, "expert weights must be [experts, rows, cols] with one "
                                   "expert count; got " +
                                       formatShape(type.getShape()));
    int64_t in = type.getDimSize(transposed ? 2 : 1);
    int64_t out = type.getDimSize(transposed ? 1 : 2);
    int64_t expectedIn = down ? ffn : hidden, expectedOut = down ? hidden : ffn;
    if (ffn < 0 && !down)
      expectedOut = ffn = out;
    if (in != expectedIn || out != expectedOut)
      return fail<MoeOp>(location, Twine(down ? "the down projection" : "a projection") +
                                       " does not fit hidden size " + Twine(hidden) +
                                       " and expert width " + Twine(ffn) + "; got " +
                                       formatShape(type.getShape()));
  }
  int64_t experts = adaptor.getExperts(), slots = indices.getDimSize(1);
  if (local < 1 || experts % local != 0 || slots < 1 || slots > experts)
    return fail<MoeOp>(location, "expects 1 <= k <= experts and the weights' expert dim to "
                                 "divide experts; got k = " +
                                     Twine(slots) + ", experts = " + Twine(experts) +
                                     ", weights for " + Twine(local));
  if (!llvm::is_contained({"silu", "gelu", "gelu_tanh", "relu"}, adaptor.getActivation()))
    return fail<MoeOp>(location, "activation must be silu, gelu, gelu_tanh or relu; got '" +
                                     adaptor.getActivation() + "'");
  if (capacity < 0)
    return fail<MoeOp>(location, "capacity must be >= 0 (0: every entry kept); got " +
                                     Twine(capacity));
  types.push_back(input);
  return success();
}

LogicalResult RotaryOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = tensorType(adaptor.getInput());
  RankedTensorType cos = tensorType(adaptor.getCos()), sin = tensorType(adaptor.getSin());
  if (failed(checkSameElementType<RotaryOp>(location, input, cos)) ||
      failed(checkSameElementType<RotaryOp>(location, input, sin)))
    return failure();
  if (cos.getShape() != sin.getShape())
    return fail<RotaryOp>(location, "cos and sin shapes differ; got " +
                                        formatShape(cos.getShape()) + " and " +
                                        formatShape(sin.getShape()));
  if (input.getRank() < 1 || cos.getRank() < 1)
    return fail<RotaryOp>(location, "input and cos must have rank >= 1");
  int64_t features = input.getShape().back(), rotated = cos.getShape().back();
  if (rotated % 2 != 0 || rotated > features || rotated == 0)
    return fail<RotaryOp>(location, "rotated features must be even, non-zero and at most " +
                                        Twine(features) + "; got " + Twine(rotated));
  if (!broadcastsTo(cos.getShape().drop_back(), input.getShape().drop_back()))
    return fail<RotaryOp>(location, "cos does not broadcast to the input; expected " +
                                        formatShape(input.getShape().drop_back()) + " but got " +
                                        formatShape(cos.getShape().drop_back()));
  types.push_back(input);
  return success();
}
