//===- GraphFolders.cpp - constant folding and trivial simplifications ----===//
//
// Folding is what turns ONNX shape arithmetic (Shape -> Gather -> Concat ->
// Reshape chains, masks from Trilu/Where, Range) into constants while the
// importer builds the graph: every op whose operands are all constants is
// evaluated by the constant evaluator (ConstEval/). Ops that are identities on their input fold to it.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/ConstantConversion.h"
#include "dialects/Graph/GraphOps.h"

#include "dialects/Graph/ConstEval/ConstEval.h"

using namespace mlir;
using namespace shardc::graph;
namespace ce = shardc::constfold;
using ce::HostTensor;

namespace {

/// Converts every operand constant; nullopt when one is not a foldable constant.
std::optional<SmallVector<HostTensor, 3>> constantOperands(ArrayRef<Attribute> operands) {
  SmallVector<HostTensor, 3> tensors;
  for (Attribute attribute : operands) {
    std::optional<HostTensor> tensor = toHostTensor(attribute);
    if (!tensor)
      return std::nullopt;
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

bool tooLargeToFold(Type type) {
  return cast<RankedTensorType>(type).getNumElements() > kMaxFoldElements;
}

/// The folded attribute, provided the evaluator produced exactly the op's result type.
Attribute asResult(const ce::StatusOr<HostTensor> &tensor, Type resultType) {
  if (!tensor)
    return {};
  DenseElementsAttr attribute = toElementsAttr(*tensor, resultType.getContext());
  if (!attribute || attribute.getType() != resultType)
    return {};
  return attribute;
}

/// Folds an op with a single result by evaluating `compute` on constant operands.
template <typename Compute>
OpFoldResult foldConstants(ArrayRef<Attribute> operands, Type resultType, Compute compute) {
  if (tooLargeToFold(resultType))
    return {};
  auto tensors = constantOperands(operands);
  if (!tensors)
    return {};
  return asResult(compute(*tensors), resultType);
}

template <typename OpTy>
OpFoldResult foldUnary(OpTy op, typename OpTy::FoldAdaptor adaptor, ce::UnaryOp kind) {
  return foldConstants(adaptor.getOperands(), op.getType(), [&](ArrayRef<HostTensor> t) {
    return ce::unary(kind, t[0]);
  });
}

template <typename OpTy>
OpFoldResult foldBinary(OpTy op, typename OpTy::FoldAdaptor adaptor, ce::BinaryOp kind) {
  return foldConstants(adaptor.getOperands(), op.getType(), [&](ArrayRef<HostTensor> t) {
    return ce::binary(kind, t[0], t[1]);
  });
}

template <typename OpTy>
OpFoldResult foldReduce(OpTy op, typename OpTy::FoldAdaptor adaptor, ce::ReduceOp kind) {
  std::vector<int64_t> axes(op.getAxes().begin(), op.getAxes().end());
  return foldConstants(adaptor.getOperands(), op.getType(), [&](ArrayRef<HostTensor> t) {
    return ce::reduce(kind, t[0], axes, op.getKeepdims());
  });
}

std::vector<int64_t> toVector(ArrayRef<int64_t> values) { return {values.begin(), values.end()}; }

} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

#define SHARDC_FOLD_UNARY(OP, KIND)                                                         \
  OpFoldResult OP::fold(FoldAdaptor adaptor) { return foldUnary(*this, adaptor, ce::UnaryOp::KIND); }
SHARDC_FOLD_UNARY(NegOp, Neg)
SHARDC_FOLD_UNARY(AbsOp, Abs)
SHARDC_FOLD_UNARY(SqrtOp, Sqrt)
SHARDC_FOLD_UNARY(RsqrtOp, Rsqrt)
SHARDC_FOLD_UNARY(ReciprocalOp, Reciprocal)
SHARDC_FOLD_UNARY(ExpOp, Exp)
SHARDC_FOLD_UNARY(LogOp, Log)
SHARDC_FOLD_UNARY(CosOp, Cos)
SHARDC_FOLD_UNARY(SinOp, Sin)
SHARDC_FOLD_UNARY(ErfOp, Erf)
SHARDC_FOLD_UNARY(TanhOp, Tanh)
SHARDC_FOLD_UNARY(SigmoidOp, Sigmoid)
SHARDC_FOLD_UNARY(ReluOp, Relu)
SHARDC_FOLD_UNARY(SiluOp, Silu)
SHARDC_FOLD_UNARY(NotOp, Not)
SHARDC_FOLD_UNARY(FloorOp, Floor)
SHARDC_FOLD_UNARY(CeilOp, Ceil)
SHARDC_FOLD_UNARY(RoundOp, Round)
SHARDC_FOLD_UNARY(SignOp, Sign)
#undef SHARDC_FOLD_UNARY

OpFoldResult IsNanOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(),
                       [](ArrayRef<HostTensor> t) { return ce::isNaN(t[0]); });
}

OpFoldResult IsInfOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::isInf(t[0], getDetectPositive(), getDetectNegative());
  });
}

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor, getApproximateTanh() ? ce::UnaryOp::GeluTanh : ce::UnaryOp::Gelu);
}

#define SHARDC_FOLD_BINARY(OP, KIND)                                                        \
  OpFoldResult OP::fold(FoldAdaptor adaptor) { return foldBinary(*this, adaptor, ce::BinaryOp::KIND); }
SHARDC_FOLD_BINARY(AddOp, Add)
SHARDC_FOLD_BINARY(SubOp, Sub)
SHARDC_FOLD_BINARY(MulOp, Mul)
SHARDC_FOLD_BINARY(DivOp, Div)
SHARDC_FOLD_BINARY(MaxOp, Max)
SHARDC_FOLD_BINARY(MinOp, Min)
SHARDC_FOLD_BINARY(AndOp, And)
SHARDC_FOLD_BINARY(OrOp, Or)
SHARDC_FOLD_BINARY(PowOp, Pow)
#undef SHARDC_FOLD_BINARY

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  return foldBinary(*this, adaptor, getFmod() ? ce::BinaryOp::FMod : ce::BinaryOp::Mod);
}

OpFoldResult CompareOp::fold(FoldAdaptor adaptor) {
  ce::BinaryOp kind = ce::BinaryOp::Equal;
  switch (getPredicate()) {
  case ComparePredicate::eq: kind = ce::BinaryOp::Equal; break;
  case ComparePredicate::lt: kind = ce::BinaryOp::Less; break;
  case ComparePredicate::le: kind = ce::BinaryOp::LessEqual; break;
  case ComparePredicate::gt: kind = ce::BinaryOp::Greater; break;
  case ComparePredicate::ge: kind = ce::BinaryOp::GreaterEqual; break;
  }
  return foldBinary(*this, adaptor, kind);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [](ArrayRef<HostTensor> t) {
    return ce::where(t[0], t[1], t[2]);
  });
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto to = toScalarType(getType().getElementType());
  if (!to)
    return {};
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::cast(t[0], *to);
  });
}

OpFoldResult MatMulOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [](ArrayRef<HostTensor> t) {
    return ce::matmul(t[0], t[1]);
  });
}

OpFoldResult ReduceSumOp::fold(FoldAdaptor adaptor) { return foldReduce(*this, adaptor, ce::ReduceOp::Sum); }
OpFoldResult ReduceMeanOp::fold(FoldAdaptor adaptor) { return foldReduce(*this, adaptor, ce::ReduceOp::Mean); }
OpFoldResult ReduceMaxOp::fold(FoldAdaptor adaptor) { return foldReduce(*this, adaptor, ce::ReduceOp::Max); }
OpFoldResult ReduceMinOp::fold(FoldAdaptor adaptor) { return foldReduce(*this, adaptor, ce::ReduceOp::Min); }

OpFoldResult CumSumOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::cumSum(t[0], getAxis(), getExclusive(), getReverse());
  });
}

OpFoldResult SoftmaxOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::softmax(t[0], getAxis());
  });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) is one reshape of x.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::reshape(t[0], toVector(getType().getShape()));
  });
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (llvm::equal(getPerm(), llvm::seq<int64_t>(0, getPerm().size())))
    return getInput();
  // transpose(transpose(x, inner), perm) is one transpose of x: result dim i
  // is the inner result's dim perm[i], which is x's dim inner[perm[i]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : getPerm())
      composed.push_back(inner.getPerm()[p]);
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::transpose(t[0], toVector(getPerm()));
  });
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  bool unitSteps = llvm::all_of(getSteps(), [](int64_t s) { return s == 1; });
  if (unitSteps && getInput().getType() == getType())
    return getInput();
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::slice(t[0], toVector(getStarts()), toVector(getEnds()), toVector(getSteps()));
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    std::vector<const HostTensor *> inputs;
    for (const HostTensor &tensor : t)
      inputs.push_back(&tensor);
    return ce::concat(inputs, getAxis());
  });
}

LogicalResult SplitOp::fold(FoldAdaptor adaptor, SmallVectorImpl<OpFoldResult> &results) {
  if (getNumResults() == 1) {
    results.push_back(getInput());
    return success();
  }
  if (tooLargeToFold(getInput().getType()))
    return failure();
  auto tensors = constantOperands(adaptor.getOperands());
  if (!tensors)
    return failure();
  auto pieces = ce::split((*tensors)[0], getAxis(), toVector(getSizes()));
  if (!pieces || pieces->size() != getNumResults())
    return failure();
  for (auto [piece, result] : llvm::zip(*pieces, getResults())) {
    Attribute attribute = asResult(ce::StatusOr<HostTensor>(piece), result.getType());
    if (!attribute)
      return failure();
    results.push_back(attribute);
  }
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::gather(t[0], t[1], getAxis());
  });
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::expand(t[0], toVector(getType().getShape()));
  });
}

OpFoldResult ScatterElementsOp::fold(FoldAdaptor adaptor) {
  auto reduction = ce::parseScatterReduction(stringifyScatterReduction(getReduction()).str());
  if (!reduction)
    return {};
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::scatterElements(t[0], t[1], t[2], getAxis(), *reduction);
  });
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::gatherElements(t[0], t[1], getAxis());
  });
}

OpFoldResult GatherNdOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::gatherND(t[0], t[1], getBatchDims());
  });
}

/// Whether `indices` (constant) holds every coordinate of `shape` in
/// row-major order, each tuple naming its own element (negative from the
/// end): a ScatterND through it writes each element once, at its own place.
static bool isIdentityGrid(Attribute indices, ArrayRef<int64_t> shape) {
  auto values = dyn_cast_or_null<DenseIntElementsAttr>(indices);
  if (!values)
    return false;
  ArrayRef<int64_t> indexShape = values.getType().getShape();
  int64_t rank = int64_t(shape.size());
  if (int64_t(indexShape.size()) != rank + 1 || indexShape.drop_back() != shape ||
      indexShape.back() != rank)
    return false;
  SmallVector<int64_t> coordinate(size_t(rank), 0);
  int64_t component = 0;
  for (const APInt &value : values.getValues<APInt>()) {
    int64_t index = value.getSExtValue(), own = coordinate[size_t(component)];
    if (index != own && index != own - shape[size_t(component)])
      return false;
    if (++component < rank)
      continue;
    component = 0;
    for (int64_t dim = rank - 1; dim >= 0 && ++coordinate[size_t(dim)] == shape[size_t(dim)]; --dim)
      coordinate[size_t(dim)] = 0;
  }
  return true;
}

OpFoldResult ScatterNdOp::fold(FoldAdaptor adaptor) {
  // Writing every element at its own place (torch's slice assignment of a
  // whole mask, as the TorchScript exporter spells it) gives the updates.
  if (getReduction() == ScatterReduction::none && getUpdates().getType() == getType() &&
      isIdentityGrid(adaptor.getIndices(), getType().getShape()))
    return getUpdates();
  auto reduction = ce::parseScatterReduction(stringifyScatterReduction(getReduction()).str());
  if (!reduction)
    return {};
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::scatterND(t[0], t[1], t[2], *reduction);
  });
}

OpFoldResult TriluOp::fold(FoldAdaptor adaptor) {
  return foldConstants(adaptor.getOperands(), getType(), [&](ArrayRef<HostTensor> t) {
    return ce::trilu(t[0], getK(), getUpper());
  });
}
