//===- GraphEvaluator.cpp - graph ops computed in float64 -----------------===//
#include "test/unit/passes/Autodiff/GraphEvaluator.h"

#include "dialects/Graph/ConstantConversion.h"
#include "test/unit/passes/Autodiff/KernelEvaluation.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"

using namespace mlir;

namespace shardc::autodiff::check {
namespace {

std::string nameOf(Operation *op) { return op->getName().getStringRef().str(); }

/// By the op's folder: its operands as constant attributes in, a constant
/// (or, for an identity, one of the operands) out. The folder runs on a copy
/// whose operands are bare placeholders: some folders rewrite their op in
/// place when an operand comes from an op of the same kind (a reshape of a
/// reshape), which would change the IR under evaluation.
std::string fold(Operation *op, const std::vector<HostTensor> &operands,
                 std::vector<HostTensor> &results) {
  SmallVector<Attribute> attributes;
  for (const HostTensor &operand : operands) {
    attributes.push_back(graph::toElementsAttr(operand, op->getContext()));
    if (!attributes.back())
      return nameOf(op) + ": an operand has no constant form";
  }
  Block placeholders;
  IRMapping mapping;
  for (Value operand : op->getOperands())
    mapping.map(operand, placeholders.addArgument(operand.getType(), op->getLoc()));
  Operation *copy = op->clone(mapping);
  SmallVector<OpFoldResult> folded;
  const bool evaluated = succeeded(copy->fold(attributes, folded)) &&
                         folded.size() == copy->getNumResults();
  std::string error;
  results.clear();
  for (OpFoldResult result : evaluated ? folded : SmallVector<OpFoldResult>()) {
    if (auto value = dyn_cast<Value>(result)) {
      auto operand = dyn_cast<BlockArgument>(value);
      if (!operand || operand.getOwner() != &placeholders) {
        error = nameOf(op) + " folded to a value that is not its operand";
        break;
      }
      results.push_back(operands[operand.getArgNumber()]);
      continue;
    }
    std::optional<HostTensor> tensor = graph::toHostTensor(cast<Attribute>(result));
    if (!tensor) {
      error = nameOf(op) + " folded to an attribute that is not a dense tensor";
      break;
    }
    results.push_back(std::move(*tensor));
  }
  copy->destroy();
  if (!evaluated)
    return nameOf(op) + " has neither a folder that evaluates it nor a kernel";
  return error;
}

} // namespace

std::string evaluate(Operation *op, const std::vector<HostTensor> &operands,
                     std::vector<HostTensor> &results) {
  std::string error = hasKernelEvaluation(op) ? evaluateWithKernel(op, operands, results)
                                              : fold(op, operands, results);
  if (!error.empty())
    return error;
  for (auto [result, tensor] : llvm::zip(op->getResults(), results))
    if (llvm::ArrayRef<int64_t>(tensor.shape) != cast<RankedTensorType>(result.getType()).getShape())
      return nameOf(op) + " evaluated to " + tensor.toString(0) + ", not its result type";
  return "";
}

std::string evaluateAll(ArrayRef<Operation *> ops, llvm::DenseMap<Value, HostTensor> &values) {
  for (Operation *op : ops) {
    std::vector<HostTensor> operands, results;
    for (Value operand : op->getOperands()) {
      auto known = values.find(operand);
      if (known == values.end())
        return nameOf(op) + " reads a value not computed before it";
      operands.push_back(known->second);
    }
    if (std::string error = evaluate(op, operands, results); !error.empty())
      return error;
    for (auto [result, tensor] : llvm::zip(op->getResults(), results))
      values[result] = std::move(tensor);
  }
  return "";
}

} // namespace shardc::autodiff::check
