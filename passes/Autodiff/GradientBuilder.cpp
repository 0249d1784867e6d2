//===- GradientBuilder.cpp - the graph ops gradients are written with -----===//
#include "passes/Autodiff/GradientBuilder.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace shardc::autodiff {

using graph::shapeOf;
using graph::tensorType;

Value GradientBuilder::scalar(double value, Type element) {
  auto type = RankedTensorType::get({}, element);
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(element)) {
    bool lost = false;
    APFloat number(value);
    number.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    attr = DenseElementsAttr::get(type, number);
  } else {
    attr = DenseElementsAttr::get(type, APInt(element.getIntOrFloatBitWidth(), int64_t(value),
                                              /*isSigned=*/true));
  }
  return builder.create<graph::ConstantOp>(location, cast<ElementsAttr>(attr));
}

Value GradientBuilder::scalarLike(Value like, double value) {
  return scalar(value, tensorType(like).getElementType());
}

Value GradientBuilder::zeros(RankedTensorType type) {
  Attribute zero = builder.getZeroAttr(type.getElementType());
  return builder.create<graph::ConstantOp>(location,
                                           cast<ElementsAttr>(DenseElementsAttr::get(type, zero)));
}

Value GradientBuilder::add(Value a, Value b) { return builder.create<graph::AddOp>(location, a, b); }
Value GradientBuilder::sub(Value a, Value b) { return builder.create<graph::SubOp>(location, a, b); }
Value GradientBuilder::mul(Value a, Value b) { return builder.create<graph::MulOp>(location, a, b); }
Value GradientBuilder::div(Value a, Value b) { return builder.create<graph::DivOp>(location, a, b); }
Value GradientBuilder::neg(Value a) { return builder.create<graph::NegOp>(location, a); }
Value GradientBuilder::scale(Value a, double value) { return mul(a, scalarLike(a, value)); }

Value GradientBuilder::reshape(Value value, ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  auto type = RankedTensorType::get(shape, tensorType(value).getElementType());
  return builder.create<graph::ReshapeOp>(location, type, value);
}

Value GradientBuilder::transpose(Value value, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (auto [index, dim] : llvm::enumerate(perm))
    identity &= int64_t(index) == dim;
  if (identity)
    return value;
  return builder.create<graph::TransposeOp>(location, value, builder.getDenseI64ArrayAttr(perm));
}

Value GradientBuilder::swapLastTwo(Value value) {
  int64_t rank = int64_t(shapeOf(value).size());
  SmallVector<int64_t> perm;
  for (int64_t dim = 0; dim < rank; ++dim)
    perm.push_back(dim);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(value, perm);
}

Value GradientBuilder::reduceSum(Value value, ArrayRef<int64_t> axes, bool keepdims) {
  if (axes.empty())
    return value;
  return builder.create<graph::ReduceSumOp>(location, value, builder.getDenseI64ArrayAttr(axes),
                                            builder.getBoolAttr(keepdims));
}

Value GradientBuilder::reduceMean(Value value, ArrayRef<int64_t> axes, bool keepdims) {
  return builder.create<graph::ReduceMeanOp>(location, value, builder.getDenseI64ArrayAttr(axes),
                                             builder.getBoolAttr(keepdims));
}

Value GradientBuilder::expand(Value value, ArrayRef<int64_t> shape) {
  if (shapeOf(value) == shape)
    return value;
  auto type = RankedTensorType::get(shape, tensorType(value).getElementType());
  return builder.create<graph::ExpandOp>(location, type, value);
}

Value GradientBuilder::matmul(Value lhs, Value rhs) {
  return builder.create<graph::MatMulOp>(location, lhs, rhs);
}

Value GradientBuilder::compare(graph::ComparePredicate predicate, Value lhs, Value rhs) {
  return builder.create<graph::CompareOp>(location, predicate, lhs, rhs);
}

Value GradientBuilder::where(Value condition, Value whenTrue, Value whenFalse) {
  return builder.create<graph::WhereOp>(location, condition, whenTrue, whenFalse);
}

Value GradientBuilder::rows(Value value) {
  ArrayRef<int64_t> shape = shapeOf(value);
  int64_t count = 1;
  for (int64_t dim : shape.drop_back())
    count *= dim;
  return reshape(value, {count, shape.back()});
}

Value GradientBuilder::flat(Value value) {
  return reshape(value, {tensorType(value).getNumElements()});
}

Value GradientBuilder::sumToShape(Value gradient, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = shapeOf(gradient);
  if (from == shape)
    return gradient;
  int64_t extra = int64_t(from.size()) - int64_t(shape.size());
  SmallVector<int64_t> axes;
  for (int64_t dim = 0; dim < int64_t(from.size()); ++dim)
    if (dim < extra || (shape[dim - extra] == 1 && from[dim] != 1))
      axes.push_back(dim);
  return reshape(reduceSum(gradient, axes, /*keepdims=*/false), shape);
}

} // namespace shardc::autodiff
