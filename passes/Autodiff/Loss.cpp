//===- Loss.cpp - the training loss appended to the model -----------------===//
#include "passes/Autodiff/Loss.h"

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Autodiff/GradientBuilder.h"

using namespace mlir;

namespace shardc::autodiff {
namespace {

using graph::shapeOf;
using graph::tensorType;

constexpr int64_t kIgnoredLabel = -100;

/// The return operand named `name`, or an error listing the outputs.
FailureOr<Value> findOutput(func::FuncOp main, StringRef name, StringRef spec) {
  Operation *terminator = main.getBody().front().getTerminator();
  std::string names;
  for (unsigned index = 0; index < main.getNumResults(); ++index) {
    auto attr = main.getResultAttrOfType<StringAttr>(index, graph::kNameAttrName);
    StringRef resultName = attr ? attr.getValue() : StringRef();
    if (resultName == name)
      return terminator->getOperand(index);
    names += (names.empty() ? "'" : ", '") + resultName.str() + "'";
  }
  return main.emitError() << "--loss " << spec << ": the model has no output '" << name
                          << "'; its outputs are " << names;
}

Value addArgument(func::FuncOp main, StringRef name, RankedTensorType type) {
  unsigned index = main.getNumArguments();
  (void)main.insertArgument(index, type, {}, main.getLoc());
  main.setArgAttr(index, graph::kNameAttrName, StringAttr::get(main.getContext(), name));
  return main.getArgument(index);
}

/// Mean over the counted tokens of -log softmax(logits)[label], logits
/// [N, V] and labels [N]. The picked logit is a sum over the vocabulary
/// against a one-hot mask, so a vocabulary split over tp reduces it like the
/// log-sum-exp's sum (Megatron-LM's vocab-parallel cross-entropy): the
/// logits are never gathered.
BuiltLoss tokenCrossEntropy(GradientBuilder &g, Value logits, Value labels) {
  OpBuilder &b = g.b();
  Location loc = g.loc();
  int64_t vocab = shapeOf(logits)[1];
  Value max = b.create<graph::ReduceMaxOp>(loc, logits, b.getDenseI64ArrayAttr({1}),
                                           b.getBoolAttr(true));
  Value shifted = g.sub(logits, max);
  Value sumExp = g.reduceSum(b.create<graph::ExpOp>(loc, shifted), {1}, false);
  Value logSumExp = b.create<graph::LogOp>(loc, sumExp);

  auto indexType = RankedTensorType::get({vocab}, b.getI64Type());
  SmallVector<int64_t> range;
  for (int64_t index = 0; index < vocab; ++index)
    range.push_back(index);
  Value classes = b.create<graph::ConstantOp>(
      loc, cast<ElementsAttr>(DenseElementsAttr::get(indexType, ArrayRef<int64_t>(range))));
  Value column = g.reshape(labels, {shapeOf(labels)[0], 1});
  Value oneHot = g.compare(graph::ComparePredicate::eq, column, classes);
  Value zero = g.scalarLike(logits, 0);
  Value picked =
      g.reduceSum(g.where(oneHot, shifted, zero), {1}, false);

  Value ignored = g.compare(graph::ComparePredicate::eq, labels,
                            g.scalar(double(kIgnoredLabel), b.getI64Type()));
  Value counted = b.create<graph::NotOp>(loc, ignored);
  Value perToken = g.where(counted, g.sub(logSumExp, picked), zero);
  Value total = g.reduceSum(perToken, {0}, false);
  auto countType = RankedTensorType::get(shapeOf(labels), tensorType(logits).getElementType());
  Value count = g.reduceSum(b.create<graph::CastOp>(loc, countType, counted), {0}, false);
  return {g.div(total, count), total, count, {max}};
}

} // namespace

llvm::Expected<LossSpec> parseLossSpec(StringRef text) {
  auto [kind, output] = text.split(':');
  if (kind != "causal-lm" && kind != "cross-entropy" && kind != "mse" && kind != "output")
    return llvm::createStringError(
        "--loss '" + text.str() +
        "': expected causal-lm:OUTPUT, cross-entropy:OUTPUT, mse:OUTPUT or output:NAME");
  if (output.empty())
    return llvm::createStringError("--loss '" + text.str() + "': name the model output after '" +
                                   kind.str() + ":'");
  return LossSpec{kind.str(), output.str()};
}

FailureOr<BuiltLoss> buildLoss(func::FuncOp main, const LossSpec &spec) {
  std::string specText = spec.kind + ":" + spec.output;
  FailureOr<Value> output = findOutput(main, spec.output, specText);
  if (failed(output))
    return failure();
  RankedTensorType type = tensorType(*output);
  if (!type.getElementType().isF32())
    return main.emitError() << "--loss " << specText << ": the output is "
                            << type.getElementType() << "; training needs float32";
  Operation *terminator = main.getBody().front().getTerminator();
  OpBuilder builder(terminator);
  GradientBuilder g(builder, output->getLoc());
  ArrayRef<int64_t> shape = type.getShape();

  if (spec.kind == "output") {
    if (type.getNumElements() != 1)
      return main.emitError() << "--loss " << specText << ": the output is "
                              << graph::formatShape(shape) << "; a loss is one value";
    Value loss = g.reshape(*output, {});
    return BuiltLoss{loss, loss, Value(), {}};
  }
  if (spec.kind == "mse") {
    Value target = addArgument(main, "target", type);
    Value error = g.sub(*output, target);
    Value squares = g.flat(g.mul(error, error));
    Value total = g.reduceSum(squares, {0}, false);
    Value count = g.scalarLike(total, double(type.getNumElements()));
    return BuiltLoss{g.div(total, count), total, count, {}};
  }
  const bool shift = spec.kind == "causal-lm";
  if (int64_t(shape.size()) < (shift ? 3 : 2) || (shift && shape[shape.size() - 2] < 2))
    return main.emitError() << "--loss " << specText << ": the output is "
                            << graph::formatShape(shape) << "; expected "
                            << (shift ? "[batch, sequence (at least 2), vocabulary]"
                                      : "[..., classes]");
  auto labelType = RankedTensorType::get(shape.drop_back(), builder.getI64Type());
  Value labels = addArgument(main, "labels", labelType);
  Value logits = *output;
  if (shift) {
    // Position t predicts token t + 1.
    int64_t rank = int64_t(shape.size()), seq = shape[rank - 2];
    SmallVector<int64_t> starts(rank, 0), ends(shape), steps(rank, 1);
    ends[rank - 2] = seq - 1;
    logits = builder.create<graph::SliceOp>(g.loc(), logits, builder.getDenseI64ArrayAttr(starts),
                                            builder.getDenseI64ArrayAttr(ends),
                                            builder.getDenseI64ArrayAttr(steps));
    SmallVector<int64_t> labelStarts(rank - 1, 0), labelEnds(shape.drop_back()),
        labelSteps(rank - 1, 1);
    labelStarts[rank - 2] = 1;
    labels = builder.create<graph::SliceOp>(g.loc(), labels, builder.getDenseI64ArrayAttr(labelStarts),
                                            builder.getDenseI64ArrayAttr(labelEnds),
                                            builder.getDenseI64ArrayAttr(labelSteps));
  }
  return tokenCrossEntropy(g, g.rows(logits), g.flat(labels));
}

} // namespace shardc::autodiff
