//===- Optimizer.cpp - the weight update appended to the step -------------===//
#include "passes/Autodiff/Optimizer.h"

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Autodiff/GradientBuilder.h"
#include "passes/Autodiff/LossScaling.h"

#include <cmath>

using namespace mlir;

namespace shardc::autodiff {

graph::WeightOp createState(OpBuilder &builder, Location location, StringRef name,
                            RankedTensorType type) {
  uint64_t bytes = uint64_t(type.getNumElements()) * graph::elementByteWidth(type.getElementType());
  auto state = builder.create<graph::WeightOp>(location, type, name, /*file=*/"", 0, bytes, nullptr,
                                               nullptr, nullptr, nullptr, nullptr);
  state->setAttr(graph::kTrainAttrName, builder.getStringAttr(graph::kTrainState));
  return state;
}

namespace {

using graph::tensorType;

/// The name a parameter's optimizer state `suffix` is stored under: torch's
/// state_dict key, and for a box of an initializer (one part of a fused
/// projection) the box's offsets, which tell the parts apart.
std::string stateName(graph::WeightOp weight, StringRef suffix) {
  std::string name = weight.getName().str();
  if (std::optional<ArrayRef<int64_t>> box = weight.getBoxOffsets()) {
    name += "@";
    for (auto [index, offset] : llvm::enumerate(*box))
      name += (index ? "," : "") + std::to_string(offset);
  }
  return name + "." + suffix.str();
}

/// sqrt(sum over parameters of sum(g^2)).
Value globalNorm(GradientBuilder &g, ArrayRef<Parameter> parameters) {
  Value total;
  for (Parameter parameter : parameters) {
    Value gradient = parameter.gradient;
    SmallVector<int64_t> axes;
    for (int64_t dim = 0; dim < tensorType(gradient).getRank(); ++dim)
      axes.push_back(dim);
    Value squares = g.reduceSum(g.mul(gradient, gradient), axes, false);
    total = total ? g.add(total, squares) : squares;
  }
  return g.b().create<graph::SqrtOp>(g.loc(), total);
}

/// The weight decay of `parameter` under `spec`.
double weightDecayOf(Parameter parameter, const OptimizerSpec &spec) {
  if (spec.noDecay1d && parameter.weight.getType().getRank() < 2)
    return 0;
  return spec.weightDecay;
}

void sgdUpdate(GradientBuilder &g, Parameter parameter, Value gradient, const OptimizerSpec &spec,
               Writes &writes) {
  Value weight = parameter.weight;
  if (double decay = weightDecayOf(parameter, spec); decay != 0)
    gradient = g.add(gradient, g.scale(weight, decay));
  if (spec.momentum != 0) {
    // buf = momentum * buf + g: torch's first step sets buf = g, which this
    // gives from zeros (dampening 0).
    auto buffer = createState(g.b(), g.loc(), stateName(parameter.weight, "momentum_buffer"),
                              tensorType(weight));
    Value next = g.add(g.scale(buffer, spec.momentum), gradient);
    writes.push_back({buffer, next});
    gradient = next;
  }
  writes.push_back({weight, g.sub(weight, g.scale(gradient, spec.lr))});
}

/// torch.optim.AdamW's single-tensor step; `step` is the step number after
/// this update (1 on the first).
void adamwUpdate(GradientBuilder &g, Parameter parameter, Value gradient, Value step,
                 const OptimizerSpec &spec, Writes &writes) {
  OpBuilder &b = g.b();
  Value weight = parameter.weight;
  RankedTensorType type = tensorType(weight);
  auto average = createState(b, g.loc(), stateName(parameter.weight, "exp_avg"), type);
  auto squares = createState(b, g.loc(), stateName(parameter.weight, "exp_avg_sq"), type);
  double decay = weightDecayOf(parameter, spec);
  Value decayed = decay != 0 ? g.scale(weight, 1 - spec.lr * decay) : weight;
  Value nextAverage = g.add(g.scale(average, spec.beta1), g.scale(gradient, 1 - spec.beta1));
  Value nextSquares =
      g.add(g.scale(squares, spec.beta2), g.scale(g.mul(gradient, gradient), 1 - spec.beta2));
  Value one = g.scalarLike(step, 1);
  Value correction1 =
      g.sub(one, b.create<graph::PowOp>(g.loc(), g.scalarLike(step, spec.beta1), step));
  Value correction2 =
      g.sub(one, b.create<graph::PowOp>(g.loc(), g.scalarLike(step, spec.beta2), step));
  Value stepSize = g.div(g.scalarLike(step, spec.lr), correction1);
  Value denominator = g.add(g.div(b.create<graph::SqrtOp>(g.loc(), nextSquares),
                                  b.create<graph::SqrtOp>(g.loc(), correction2)),
                            g.scalarLike(step, spec.eps));
  Value next = g.sub(decayed, g.mul(stepSize, g.div(nextAverage, denominator)));
  writes.append({{average, nextAverage}, {squares, nextSquares}, {weight, next}});
}

} // namespace

Value buildUpdate(OpBuilder &builder, Location location, ArrayRef<Parameter> parameters,
                  const OptimizerSpec &spec, const LossScale *lossScale) {
  GradientBuilder g(builder, location);
  Value norm = globalNorm(g, parameters);
  // clip_grad_norm_: every gradient times min(1, max_norm / (norm + 1e-6)).
  Value clip;
  if (spec.gradClip > 0) {
    Value coefficient =
        g.div(g.scalarLike(norm, spec.gradClip), g.add(norm, g.scalarLike(norm, 1e-6)));
    clip = builder.create<graph::MinOp>(location, coefficient, g.scalarLike(norm, 1));
  }
  Writes writes;
  Value step;
  if (spec.kind == "adamw") {
    auto counter = createState(builder, location, "shardc.step",
                               RankedTensorType::get({}, builder.getF32Type()));
    step = g.add(counter, g.scalarLike(counter, 1));
    writes.push_back({counter, step});
  }
  for (Parameter parameter : parameters) {
    Value gradient = clip ? g.mul(parameter.gradient, clip) : parameter.gradient;
    if (spec.kind == "adamw")
      adamwUpdate(g, parameter, gradient, step, spec, writes);
    else
      sgdUpdate(g, parameter, gradient, spec, writes);
  }
  if (lossScale)
    lossScale->guard(g, norm, writes);
  for (auto [target, value] : writes)
    builder.create<graph::AssignOp>(location, target, value);
  return norm;
}

} // namespace shardc::autodiff
