//===- Autodiff.cpp - the training step: loss, gradients, update ----------===//
//
// Reverse mode over main's one block, which is in dependency order: the
// sweep visits ops from last to first, and an op's results have every
// contribution to their gradient by the time it is visited (all their users
// come after it). Only "active" values take part: floats that depend on a
// trained weight and that the loss depends on. Masks, positions and other
// inputs-only values get no gradient and need no rule.
//
//===----------------------------------------------------------------------===//
#include "passes/Autodiff/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/TrainingPhase.h"
#include "dialects/Graph/TypeUtils.h"
#include "passes/Autodiff/Loss.h"
#include "passes/Autodiff/LossScaling.h"
#include "passes/Autodiff/Optimizer.h"
#include "passes/Autodiff/TiedWeights.h"
#include "passes/Autodiff/VjpRules.h"
#include "passes/Graph/Outlining.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace shardc::autodiff {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Autodiff/Passes.h.inc"
} // namespace shardc::autodiff

using namespace mlir;

namespace {

using shardc::graph::tensorType;
namespace graph = shardc::graph;
namespace autodiff = shardc::autodiff;

bool isFloat(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// Operands whose value a model computes from positions, never trained:
/// rotary embeddings' cos and sin tables (an export may keep their inverse
/// frequencies as an initializer; torch holds them as a buffer).
bool positional(Operation *op, unsigned operand) {
  return isa<graph::RotaryOp>(op) && operand > 0;
}

/// Every value the loss depends on, not through `constants` or positional
/// operands.
llvm::DenseSet<Value> lossDependencies(Value loss, ArrayRef<Value> constants) {
  llvm::DenseSet<Value> seen;
  SmallVector<Value> work{loss};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (llvm::is_contained(constants, value) || !seen.insert(value).second)
      continue;
    if (Operation *op = value.getDefiningOp())
      for (OpOperand &operand : op->getOpOperands())
        if (!positional(op, operand.getOperandNumber()))
          work.push_back(operand.get());
  }
  return seen;
}

bool frozen(StringRef name, ArrayRef<std::string> freeze) {
  return llvm::any_of(freeze, [&](const std::string &prefix) { return name.starts_with(prefix); });
}

struct AutodiffPass : autodiff::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.getBody().getBlocks().size() != 1) {
      module.emitError() << "shardc-autodiff needs a function 'main' of one block";
      return signalPassFailure();
    }
    if (failed(differentiate(main)))
      signalPassFailure();
  }

  autodiff::OptimizerSpec optimizerSpec() const {
    autodiff::OptimizerSpec spec;
    spec.kind = optimizer;
    spec.lr = lr;
    spec.beta1 = beta1;
    spec.beta2 = beta2;
    spec.eps = eps;
    spec.weightDecay = weightDecay >= 0 ? weightDecay : (optimizer == "adamw" ? 0.01 : 0.0);
    spec.noDecay1d = noDecay1d;
    spec.momentum = momentum;
    spec.gradClip = gradClip;
    return spec;
  }

  LogicalResult differentiate(func::FuncOp main) {
    if (optimizer != "adamw" && optimizer != "sgd")
      return main.emitError() << "--optimizer '" << optimizer << "': expected adamw or sgd";
    SmallVector<graph::CompositeOp> composites;
    main.walk([&](graph::CompositeOp op) {
      if (!op->getParentOfType<graph::CompositeOp>())
        composites.push_back(op);
    });
    for (graph::CompositeOp composite : composites)
      graph::inlineComposite(composite);
    separateBiases(main);

    // Below this size equal bytes are a coincidence (two biases initialised
    // alike), not an export's copy of one tensor.
    constexpr int64_t kTieMinElements = 256;
    if (!untie && failed(autodiff::tieDuplicateWeights(main, kTieMinElements)))
      return failure();
    auto spec = autodiff::parseLossSpec(loss);
    if (!spec)
      return main.emitError() << llvm::toString(spec.takeError());
    FailureOr<autodiff::BuiltLoss> built = autodiff::buildLoss(main, *spec);
    if (failed(built))
      return failure();
    llvm::DenseSet<Value> needed = lossDependencies(built->objective, built->constants);

    Block &body = main.getBody().front();
    SmallVector<graph::WeightOp> parameters;
    for (auto weight : body.getOps<graph::WeightOp>()) {
      if (!isFloat(weight) || !needed.contains(weight.getResult()) ||
          frozen(weight.getName(), freeze))
        continue;
      if (weight.getStoredType())
        return weight.emitOpError() << "is stored as " << *weight.getStoredType()
                                    << "; training updates float32 weights";
      parameters.push_back(weight);
    }
    if (parameters.empty())
      return main.emitError() << "--loss " << loss
                              << ": nothing to train: no float weight the loss depends on is left "
                                 "trainable (check --freeze)";

    // Forward activity, in block order.
    llvm::DenseSet<Value> active;
    for (graph::WeightOp weight : parameters)
      active.insert(weight.getResult());
    for (Operation &op : body)
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value result : op.getResults())
          if (isFloat(result) && needed.contains(result))
            active.insert(result);

    OpBuilder builder(body.getTerminator());
    llvm::DenseMap<Value, Value> grads;
    std::optional<autodiff::LossScale> lossScale;
    {
      autodiff::GradientBuilder g(builder, built->loss.getLoc());
      if (lossScaling)
        lossScale.emplace(g);
      // The mean's gradient starts as 1 over its denominator. With
      // micro-batches the denominator (the global token count) is known
      // only once all of them ran: the sweep starts from the sum instead,
      // and the gradients are divided once summed. (Not always: dividing
      // every gradient by one scalar links them all in the sharding search,
      // whose tables then outgrow its bound on the zoo's larger exports.)
      // With loss scaling (fp16) the sweep starts from the scale instead.
      Value one = lossScale ? lossScale->scale() : g.scalarLike(built->objective, 1.0);
      grads[built->objective] =
          built->denominator && !sumGradients ? g.div(one, built->denominator) : one;
    }
    // The report and the memory check tell the step's parts apart by tag
    // (dialects/Graph/TrainingPhase.h); the loss counts as forward.
    graph::tagUntaggedOps(body, graph::Phase::Forward);
    SmallVector<Operation *> forward;
    for (Operation &op : body.without_terminator())
      forward.push_back(&op);
    if (tagOwners)
      for (auto [id, op] : llvm::enumerate(forward))
        op->setAttr(graph::kOpIdAttrName, builder.getI64IntegerAttr(int64_t(id)));
    for (Operation *op : llvm::reverse(forward)) {
      if (llvm::none_of(op->getResults(), [&](Value r) { return grads.count(r); }))
        continue;
      SmallVector<bool> wanted;
      for (Value operand : op->getOperands())
        wanted.push_back(active.contains(operand));
      if (llvm::none_of(wanted, [](bool w) { return w; }))
        continue;
      autodiff::GradientBuilder g(builder, op->getLoc());
      SmallVector<Value> resultGrads;
      for (Value result : op->getResults()) {
        Value grad = grads.lookup(result);
        resultGrads.push_back(grad ? grad : g.zeros(tensorType(result)));
      }
      Operation *before = body.getTerminator()->getPrevNode();
      autodiff::VjpCall call{op, resultGrads, wanted, g, {}};
      if (failed(autodiff::buildVjp(call)))
        return failure();
      if (tagOwners)
        for (Operation *made = before->getNextNode(); made != body.getTerminator();
             made = made->getNextNode())
          if (!isa<graph::ConstantOp>(made))
            made->setAttr(graph::kVjpOfAttrName, op->getAttr(graph::kOpIdAttrName));
      for (auto [operand, grad] : llvm::zip(op->getOperands(), call.operandGrads)) {
        if (!grad)
          continue;
        Value &sum = grads[operand];
        sum = sum ? g.add(sum, grad) : grad;
      }
    }

    graph::tagUntaggedOps(body, graph::Phase::Backward);
    SmallVector<autodiff::Parameter> updates;
    autodiff::GradientBuilder g(builder, built->loss.getLoc());
    for (graph::WeightOp weight : parameters) {
      weight->setAttr(graph::kTrainAttrName, builder.getStringAttr(graph::kTrainParam));
      Value gradient = grads.lookup(weight.getResult());
      if (built->denominator && sumGradients)
        gradient = g.div(gradient, built->denominator);
      if (lossScale)
        gradient = g.div(gradient, lossScale->scale());
      updates.push_back({weight, gradient});
    }
    Value norm = autodiff::buildUpdate(builder, main.getLoc(), updates, optimizerSpec(),
                                       lossScale ? &*lossScale : nullptr);
    graph::tagUntaggedOps(body, graph::Phase::Optimizer);

    // main now returns the loss and the gradient norm.
    Operation *terminator = body.getTerminator();
    builder.setInsertionPoint(terminator);
    builder.create<func::ReturnOp>(terminator->getLoc(), ValueRange{built->loss, norm});
    terminator->erase();
    auto scalar = RankedTensorType::get({}, builder.getF32Type());
    main.setType(builder.getFunctionType(main.getArgumentTypes(), {scalar, scalar}));
    auto named = [&](StringRef name) {
      return builder.getDictionaryAttr(
          builder.getNamedAttr(graph::kNameAttrName, builder.getStringAttr(name)));
    };
    main.setAllResultAttrs(ArrayRef<DictionaryAttr>{named("loss"), named("grad_norm")});
    eraseDeadOps(body);
    describeStep(main);
    return success();
  }

  /// What the manifest says of the step (docs/training.md).
  void describeStep(func::FuncOp main) {
    Builder b(main.getContext());
    autodiff::OptimizerSpec spec = optimizerSpec();
    SmallVector<NamedAttribute> optimizerAttrs{b.getNamedAttr("name", b.getStringAttr(spec.kind)),
                                               b.getNamedAttr("lr", b.getF64FloatAttr(spec.lr)),
                                               b.getNamedAttr("weight_decay",
                                                              b.getF64FloatAttr(spec.weightDecay))};
    if (spec.kind == "adamw") {
      optimizerAttrs.push_back(b.getNamedAttr("beta1", b.getF64FloatAttr(spec.beta1)));
      optimizerAttrs.push_back(b.getNamedAttr("beta2", b.getF64FloatAttr(spec.beta2)));
      optimizerAttrs.push_back(b.getNamedAttr("eps", b.getF64FloatAttr(spec.eps)));
    } else {
      optimizerAttrs.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(spec.momentum)));
    }
    if (spec.gradClip > 0)
      optimizerAttrs.push_back(b.getNamedAttr("grad_clip", b.getF64FloatAttr(spec.gradClip)));
    if (spec.noDecay1d)
      optimizerAttrs.push_back(b.getNamedAttr("no_decay_1d", b.getBoolAttr(true)));
    main->getParentOp()->setAttr(
        shardc::graph::kTrainingAttrName,
        b.getDictionaryAttr({b.getNamedAttr("loss", b.getStringAttr(loss)),
                             b.getNamedAttr("optimizer", b.getDictionaryAttr(optimizerAttrs))}));
  }

  /// A linear's bias becomes an add after it. A trained bias is one storage
  /// that no device may hold as a share of a sum, so inside the linear it
  /// would rule out Megatron's row-parallel layer (whose output is a partial
  /// sum, completed by an all-reduce before the bias is added); the CPU's
  /// lowering fuses the add back into the GEMM where nothing is split.
  static void separateBiases(func::FuncOp main) {
    SmallVector<graph::LinearOp> biased;
    main.walk([&](graph::LinearOp linear) {
      if (linear.getBias())
        biased.push_back(linear);
    });
    for (graph::LinearOp linear : biased) {
      OpBuilder builder(linear);
      Value product = builder.create<graph::LinearOp>(
          linear.getLoc(), linear.getType(), linear.getInput(), linear.getWeight(), Value(),
          linear.getTransposeWeight());
      Value sum = builder.create<graph::AddOp>(linear.getLoc(), product, linear.getBias());
      linear.getResult().replaceAllUsesWith(sum);
      linear.erase();
    }
  }

  /// The forward's outputs other than the loss are no longer returned.
  static void eraseDeadOps(Block &body) {
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isMemoryEffectFree(op))
        op->erase();
  }
};

} // namespace
