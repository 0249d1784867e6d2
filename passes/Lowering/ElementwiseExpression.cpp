//===- ElementwiseExpression.cpp - an elementwise kernel as an expression -===//
#include "passes/Lowering/ElementwiseExpression.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace shardc::lowering {

int arityOf(StringRef op) {
  return llvm::StringSwitch<int>(op)
      .Cases("add", "sub", "mul", "div", "pow", "max", "min", 2)
      .Cases("mod", "fmod", 2)
      .Cases("neg", "abs", "sqrt", "rsqrt", "reciprocal", "exp", "log", 1)
      .Cases("cos", "sin", "erf", "tanh", "sigmoid", "relu", "silu", 1)
      .Cases("gelu", "gelu_tanh", "floor", "ceil", "round", "sign", 1)
      .Default(0);
}

std::optional<Expression> expressionOf(exec::KernelOp kernel) {
  // The fused kernels compute in float32 (runtime/cpu/Fused.cpp); f16/bf16
  // chains keep their per-op kernels, which accumulate in fp32.
  if (kernel.getOutputs().size() != 1 ||
      !cast<MemRefType>(kernel.getOutputs()[0].getType()).getElementType().isF32())
    return std::nullopt;
  Expression expression;
  expression.inputs = llvm::to_vector(kernel.getInputs());
  if (kernel.getKernel() == kFusedKernel) {
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

} // namespace shardc::lowering
