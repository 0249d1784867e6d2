//===- FoldMatMulTransposes.cpp - matmuls read transposed operands in place ===//
//
// See the pass description (Passes.td). The gradient rules write a weight's
// gradient as x^T dy and attention's backward as products with transposed
// probabilities, keys and queries (passes/Autodiff/VjpContraction.cpp):
// graph.transpose then graph.matmul, which lowered as they are copy every
// such operand once more before the GEMM reads it.
//
//===----------------------------------------------------------------------===//
#include "passes/Lowering/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_FOLDMATMULTRANSPOSESPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

/// The buffer whose bytes `value` names (views followed to their source).
Value storageOf(Value value) {
  while (auto view = value.getDefiningOp<exec::ViewOp>())
    value = view.getSource();
  return value;
}

/// The transpose kernel that writes `operand` when it swaps exactly the last
/// two dims of a float32 tensor of rank >= 2 and is the buffer's only writer.
exec::KernelOp swapOfLastTwo(Value operand) {
  if (!operand.getDefiningOp<exec::AllocOp>())
    return {};
  exec::KernelOp writer;
  for (Operation *user : operand.getUsers())
    if (auto kernel = dyn_cast<exec::KernelOp>(user);
        kernel && llvm::is_contained(kernel.getOutputs(), operand)) {
      if (writer)
        return {};
      writer = kernel;
    }
  if (!writer || writer.getKernel() != "transpose" || writer.getInputs().size() != 1 ||
      writer.getOutputs().size() != 1)
    return {};
  auto type = cast<MemRefType>(operand.getType());
  auto perm = dyn_cast_or_null<DenseI64ArrayAttr>(writer.getParams().get("perm"));
  const int64_t rank = type.getRank();
  if (!type.getElementType().isF32() || rank < 2 || !perm || int64_t(perm.size()) != rank)
    return {};
  for (int64_t dim = 0; dim < rank; ++dim) {
    const int64_t expected = dim == rank - 2 ? rank - 1 : dim == rank - 1 ? rank - 2 : dim;
    if (perm[dim] != expected)
      return {};
  }
  return writer;
}

/// Whether, after `from` and before `to`, a kernel writes the buffer `source`
/// names or a micro-batch loop ends (the two would then read different
/// values of it).
bool changesBetween(Value source, Operation *from, Operation *to) {
  Value storage = storageOf(source);
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    if (isa<exec::MicrobatchLoopEndOp>(op))
      return true;
    if (auto kernel = dyn_cast<exec::KernelOp>(op))
      for (Value output : kernel.getOutputs())
        if (storageOf(output) == storage)
          return true;
  }
  return false;
}

/// Makes `matmul` read operand `index` (0 lhs, 1 rhs) from the transpose's
/// input, flagged transposed, where it can.
void foldOperand(exec::KernelOp matmul, unsigned index) {
  const StringRef flag = index == 0 ? "transpose_lhs" : "transpose_rhs";
  if (matmul.getParams().get(flag))
    return;
  Value operand = matmul.getInputs()[index];
  exec::KernelOp transpose = swapOfLastTwo(operand);
  if (!transpose || transpose->getBlock() != matmul->getBlock() ||
      !transpose->isBeforeInBlock(matmul))
    return;
  Value source = transpose.getInputs().front();
  if (changesBetween(source, transpose, matmul))
    return;
  matmul.getInputsMutable()[index].set(source);
  NamedAttrList params(matmul.getParams());
  params.set(flag, BoolAttr::get(matmul.getContext(), true));
  matmul.setParamsAttr(params.getDictionary(matmul.getContext()));
  // The transpose goes once nothing else reads its result.
  if (llvm::all_of(operand.getUsers(), [&](Operation *user) { return user == transpose; })) {
    Operation *buffer = operand.getDefiningOp();
    transpose.erase();
    buffer->erase();
  }
}

struct FoldMatMulTransposesPass
    : shardc::lowering::impl::FoldMatMulTransposesPassBase<FoldMatMulTransposesPass> {
  void runOnOperation() override {
    SmallVector<exec::KernelOp> matmuls;
    getOperation().walk([&](exec::KernelOp kernel) {
      if (kernel.getKernel() == "matmul" && kernel.getInputs().size() == 2 &&
          kernel.getOutputs().size() == 1)
        matmuls.push_back(kernel);
    });
    for (exec::KernelOp matmul : matmuls)
      for (unsigned index : {0u, 1u})
        foldOperand(matmul, index);
  }
};

} // namespace
