//===- FuseElementwise.cpp - chains of elementwise kernels into one -------===//
//
// A "fused" kernel carries its expression in two parameters:
//   ops  = ["mul", "add", "gelu"]        the steps, in evaluation order
//   args = array<i64: 0, 1, 3, 2, 4>     each step's arguments, one per arity:
//          an index below the number of kernel inputs names that input, an
//          index i above it names the result of step i - #inputs.
// The last step is the kernel's output. Every step is evaluated per element
// of the output's (broadcast) index space.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

constexpr StringLiteral kFused = "fused";

/// Float elementwise kernels the fused kernel evaluates, with their arity.
int arityOf(StringRef kernel) {
  return llvm::StringSwitch<int>(kernel)
      .Cases("add", "sub", "mul", "div", "pow", "max", "min", 2)
      .Cases("mod", "fmod", 2)
      .Cases("neg", "abs", "sqrt", "rsqrt", "reciprocal", "exp", "log", 1)
      .Cases("cos", "sin", "erf", "tanh", "sigmoid", "relu", "silu", 1)
      .Cases("gelu", "gelu_tanh", "floor", "ceil", "round", "sign", 1)
      .Default(0);
}

/// An expression being grown: kernel inputs plus steps over them.
struct Expression {
  SmallVector<Value> inputs;
  SmallVector<std::string> ops;
  SmallVector<int64_t> args;
};

/// The expression of a kernel that can take part in fusion, if it can.
std::optional<Expression> expressionOf(exec::KernelOp kernel) {
  // The fused kernels compute in float32 (runtime/cpu/Fused.cpp); f16/bf16
  // chains keep their per-op kernels, which accumulate in fp32.
  if (kernel.getOutputs().size() != 1 ||
      !cast<MemRefType>(kernel.getOutputs()[0].getType()).getElementType().isF32())
    return std::nullopt;
  Expression expression;
  expression.inputs = llvm::to_vector(kernel.getInputs());
  if (kernel.getKernel() == kFused) {
    for (Attribute op : kernel.getParams().getAs<ArrayAttr>("ops"))
      expression.ops.push_back(cast<StringAttr>(op).str());
    llvm::append_range(expression.args,
                       kernel.getParams().getAs<DenseI64ArrayAttr>("args").asArrayRef());
    return expression;
  }
  std::string op = kernel.getKernel().str();
  if (op == "gelu" && kernel.getParams().get("approximate_tanh") &&
      cast<BoolAttr>(kernel.getParams().get("approximate_tanh")).getValue())
    op = "gelu_tanh";
  // graph.mod's two quotients are two expression ops: "mod" floors, "fmod" truncates.
  if (op == "mod" && kernel.getParams().get("fmod") &&
      cast<BoolAttr>(kernel.getParams().get("fmod")).getValue())
    op = "fmod";
  int arity = arityOf(op);
  if (arity == 0 || arity != static_cast<int>(expression.inputs.size()))
    return std::nullopt;
  // Every operand must be float32 too (no casts inside).
  Type element = cast<MemRefType>(kernel.getOutputs()[0].getType()).getElementType();
  for (Value input : expression.inputs)
    if (cast<MemRefType>(input.getType()).getElementType() != element)
      return std::nullopt;
  expression.ops.push_back(op);
  for (int i = 0; i < arity; ++i)
    expression.args.push_back(i);
  return expression;
}

/// `consumer` with `producer` (whose output it reads) substituted in.
Expression substitute(const Expression &producer, const Expression &consumer, Value link) {
  Expression merged;
  merged.inputs = producer.inputs;
  // The consumer's other inputs join after the producer's (deduplicated).
  SmallVector<int64_t> consumerInput(consumer.inputs.size());
  for (auto [i, input] : llvm::enumerate(consumer.inputs)) {
    if (input == link)
      continue;
    auto found = llvm::find(merged.inputs, input);
    consumerInput[i] = found - merged.inputs.begin();
    if (found == merged.inputs.end())
      merged.inputs.push_back(input);
  }
  int64_t inputs = merged.inputs.size();
  int64_t producerSteps = producer.ops.size();
  // Producer steps: inputs keep their index, step references shift by the
  // inputs the consumer added.
  int64_t shift = inputs - static_cast<int64_t>(producer.inputs.size());
  merged.ops = producer.ops;
  for (int64_t arg : producer.args)
    merged.args.push_back(arg < static_cast<int64_t>(producer.inputs.size()) ? arg : arg + shift);
  int64_t producerResult = inputs + producerSteps - 1;
  int64_t consumerInputs = consumer.inputs.size();
  for (const std::string &op : consumer.ops)
    merged.ops.push_back(op);
  for (int64_t arg : consumer.args) {
    if (arg < consumerInputs)
      merged.args.push_back(consumer.inputs[arg] == link ? producerResult : consumerInput[arg]);
    else
      merged.args.push_back(arg - consumerInputs + inputs + producerSteps);
  }
  return merged;
}

/// Tries to fold one producer of `consumer` into it; true when it did.
bool fuseOneProducer(exec::KernelOp consumer) {
  std::optional<Expression> consumerExpression = expressionOf(consumer);
  if (!consumerExpression)
    return false;
  for (Value input : consumer.getInputs()) {
    // The intermediate must be read by this kernel only (and not be an output).
    auto producer = llvm::find_if(input.getUsers(), [&](Operation *user) {
      auto kernel = dyn_cast<exec::KernelOp>(user);
      return kernel && llvm::is_contained(kernel.getOutputs(), input);
    });
    if (producer == input.getUsers().end())
      continue;
    auto producerKernel = cast<exec::KernelOp>(*producer);
    bool onlyReadHere = llvm::all_of(input.getUsers(), [&](Operation *user) {
      return user == consumer || user == producerKernel;
    });
    if (!onlyReadHere || llvm::count(consumer.getInputs(), input) != 1)
      continue;
    std::optional<Expression> producerExpression = expressionOf(producerKernel);
    if (!producerExpression)
      continue;
    Expression merged = substitute(*producerExpression, *consumerExpression, input);
    OpBuilder builder(consumer);
    SmallVector<NamedAttribute> params = {
        builder.getNamedAttr("ops", builder.getStrArrayAttr(SmallVector<StringRef>(
                                        merged.ops.begin(), merged.ops.end()))),
        builder.getNamedAttr("args", builder.getDenseI64ArrayAttr(merged.args))};
    std::string source = producerKernel.getSource().str();
    if (!consumer.getSource().empty())
      source += (source.empty() ? "" : ", ") + consumer.getSource().str();
    builder.create<exec::KernelOp>(
        builder.getFusedLoc({producerKernel.getLoc(), consumer.getLoc()}), kFused, merged.inputs,
        consumer.getOutputs(), builder.getDictionaryAttr(params), source);
    Operation *intermediate = input.getDefiningOp();
    consumer.erase();
    producerKernel.erase();
    if (intermediate && intermediate->use_empty())
      intermediate->erase();
    return true;
  }
  return false;
}

struct FuseElementwisePass
    : shardc::lowering::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    bool changed = true;
    while (changed) {
      changed = false;
      getOperation().walk([&](exec::KernelOp kernel) {
        if (fuseOneProducer(kernel)) {
          changed = true;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
    }
  }
};

} // namespace
