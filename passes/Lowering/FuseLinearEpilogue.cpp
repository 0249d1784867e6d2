//===- FuseLinearEpilogue.cpp - elementwise work inside the linear's GEMM --===//
//
// See the pass description (Passes.td). The epilogue is kept in the form
// oneDNN post-ops take, so that the CPU always runs it inside the GEMM: a
// chain over one running value, starting from the GEMM's result.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/ElementwiseExpression.h"
#include "passes/Lowering/Passes.h"
#include "runtime/kernels/LinearEpilogueOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_FUSELINEAREPILOGUEPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

using lowering::Expression;

using rt::kernels::EpilogueOpKind;

/// Whether the linear can apply `op` (LinearEpilogueOps.h), read as `kind`.
bool isEpilogueOp(StringRef op, EpilogueOpKind kind) {
  const rt::kernels::EpilogueOp *known = rt::kernels::linearEpilogueOp({op.data(), op.size()});
  return known && known->kind == kind;
}
bool isPostOpUnary(StringRef op) { return isEpilogueOp(op, EpilogueOpKind::Unary); }
bool isCommutative(StringRef op) { return isEpilogueOp(op, EpilogueOpKind::CommutativeBinary); }
bool isPostOpBinary(StringRef op) {
  return isCommutative(op) || isEpilogueOp(op, EpilogueOpKind::Binary);
}

ArrayRef<int64_t> shapeOf(Value buffer) { return cast<MemRefType>(buffer.getType()).getShape(); }

/// The buffer whose bytes `value` names (views followed to their source).
Value storageOf(Value value) {
  while (auto view = value.getDefiningOp<exec::ViewOp>())
    value = view.getSource();
  return value;
}

struct Epilogue {
  SmallVector<Value> extras; // the linear's inputs after its own
  SmallVector<std::string> ops;
  SmallVector<int64_t> args; // 0: the GEMM's result, 1..extras: extras, then steps
};

/// `expression` as post-ops on the GEMM's result `gemm` (one of its inputs,
/// read once): each step reads the running value, binary steps also one
/// extra input of the result's shape. Null when it is not such a chain.
std::optional<Epilogue> epilogueOf(const Expression &expression, Value gemm) {
  const int64_t inputs = expression.inputs.size();
  if (llvm::count(expression.inputs, gemm) != 1)
    return std::nullopt;
  const int64_t start = llvm::find(expression.inputs, gemm) - expression.inputs.begin();
  // The running value and the other operand of every step, in input indices.
  struct Step {
    StringRef op;
    std::optional<int64_t> extra;
  };
  SmallVector<Step> steps;
  int64_t running = start;
  size_t next = 0;
  for (size_t s = 0; s < expression.ops.size(); ++s) {
    StringRef op = expression.ops[s];
    const int arity = lowering::arityOf(op);
    if (arity == 1) {
      if (!isPostOpUnary(op) || expression.args[next] != running)
        return std::nullopt;
      steps.push_back({op, std::nullopt});
    } else {
      int64_t a = expression.args[next], b = expression.args[next + 1];
      if (!isPostOpBinary(op))
        return std::nullopt;
      if (b == running && isCommutative(op))
        std::swap(a, b);
      // The other operand: an input of the expression, not the GEMM's result.
      if (a != running || b >= inputs || b == start ||
          shapeOf(expression.inputs[b]) != shapeOf(gemm))
        return std::nullopt;
      steps.push_back({op, b});
    }
    next += arity;
    running = inputs + static_cast<int64_t>(s);
  }
  Epilogue epilogue;
  DenseMap<int64_t, int64_t> extraIndex; // expression input -> epilogue input
  for (const Step &step : steps)
    if (step.extra && extraIndex.try_emplace(*step.extra, epilogue.extras.size() + 1).second)
      epilogue.extras.push_back(expression.inputs[*step.extra]);
  const int64_t first = 1 + static_cast<int64_t>(epilogue.extras.size());
  int64_t value = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    epilogue.ops.push_back(steps[s].op.str());
    epilogue.args.push_back(value);
    if (steps[s].extra)
      epilogue.args.push_back(extraIndex.lookup(*steps[s].extra));
    value = first + static_cast<int64_t>(s);
  }
  return epilogue;
}

/// Whether a kernel after `from` and before `to` writes a buffer that one of
/// `from`'s inputs names: moving `from` down to `to` would then read it.
bool inputsWrittenBetween(exec::KernelOp from, Operation *to) {
  DenseSet<Value> read;
  for (Value input : from.getInputs())
    read.insert(storageOf(input));
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (auto kernel = dyn_cast<exec::KernelOp>(op))
      for (Value output : kernel.getOutputs())
        if (read.contains(storageOf(output)))
          return true;
  return false;
}

/// The elementwise kernel that alone reads `linear`'s output, with its
/// expression as an epilogue, when the two can become one.
std::optional<std::pair<exec::KernelOp, Epilogue>> fusibleReader(exec::KernelOp linear) {
  if (linear.getOutputs().size() != 1 || linear.getParams().get("epilogue_ops"))
    return std::nullopt;
  Value gemm = linear.getOutputs()[0];
  if (!cast<MemRefType>(gemm.getType()).getElementType().isF32() ||
      llvm::is_contained(linear.getInputs(), gemm))
    return std::nullopt;
  // The buffer's users: the linear that writes it and one reader.
  SmallVector<Operation *> readers;
  for (Operation *user : gemm.getUsers())
    if (user != linear.getOperation())
      readers.push_back(user);
  auto reader = readers.size() == 1 ? dyn_cast<exec::KernelOp>(readers.front()) : nullptr;
  if (!reader || reader->getBlock() != linear->getBlock() ||
      llvm::is_contained(reader.getOutputs(), gemm) ||
      shapeOf(reader.getOutputs()[0]) != shapeOf(gemm))
    return std::nullopt;
  std::optional<Expression> expression = lowering::expressionOf(reader);
  if (!expression)
    return std::nullopt;
  std::optional<Epilogue> epilogue = epilogueOf(*expression, gemm);
  if (!epilogue || inputsWrittenBetween(linear, reader))
    return std::nullopt;
  return std::pair(reader, std::move(*epilogue));
}

/// One linear kernel with the epilogue, where `reader` stood.
void fuse(exec::KernelOp linear, exec::KernelOp reader, const Epilogue &epilogue) {
  OpBuilder builder(reader);
  SmallVector<Value> inputs(linear.getInputs());
  llvm::append_range(inputs, epilogue.extras);
  SmallVector<NamedAttribute> params(linear.getParams().getValue());
  SmallVector<StringRef> ops(epilogue.ops.begin(), epilogue.ops.end());
  params.push_back(builder.getNamedAttr("epilogue_ops", builder.getStrArrayAttr(ops)));
  params.push_back(
      builder.getNamedAttr("epilogue_args", builder.getDenseI64ArrayAttr(epilogue.args)));
  params.push_back(builder.getNamedAttr(
      "epilogue_inputs", builder.getI64IntegerAttr(static_cast<int64_t>(epilogue.extras.size()))));
  std::string source = linear.getSource().str();
  if (!reader.getSource().empty())
    source += (source.empty() ? "" : ", ") + reader.getSource().str();
  builder.create<exec::KernelOp>(builder.getFusedLoc({linear.getLoc(), reader.getLoc()}),
                                 linear.getKernel(), inputs, reader.getOutputs(),
                                 builder.getDictionaryAttr(params), source);
  Value gemm = linear.getOutputs()[0];
  reader.erase();
  linear.erase();
  if (Operation *buffer = gemm.getDefiningOp(); buffer && buffer->use_empty())
    buffer->erase();
}

struct FuseLinearEpiloguePass
    : shardc::lowering::impl::FuseLinearEpiloguePassBase<FuseLinearEpiloguePass> {
  void runOnOperation() override {
    SmallVector<exec::KernelOp> linears;
    getOperation().walk([&](exec::KernelOp kernel) {
      if (kernel.getKernel() == "linear")
        linears.push_back(kernel);
    });
    for (exec::KernelOp linear : linears)
      if (auto fusible = fusibleReader(linear))
        fuse(linear, fusible->first, fusible->second);
  }
};

} // namespace
