//===- ControlFlow.cpp - importers of ONNX If and Loop --------------------===//
//
// shardc compiles static programs, so control flow is resolved while
// importing: If imports the branch its (compile-time) condition picks, and
// Loop imports its body once per iteration, with the iteration number a
// constant, loop-carried tensors and sequences passed from one copy to the
// next, and scan outputs stacked along a new first dim. The body's condition
// output ends the loop when it folds to false. Subgraphs see the names of
// the scopes around them.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

/// More iterations than this are refused rather than unrolled.
constexpr int64_t kMaxUnrolledIterations = 4096;

/// The truth value of a one-element tensor that folds to a constant.
std::optional<bool> constantFlag(Value value) {
  DenseElementsAttr attribute;
  if (!matchPattern(value, m_Constant(&attribute)) || attribute.getNumElements() != 1)
    return std::nullopt;
  Type element = attribute.getElementType();
  if (isa<FloatType>(element))
    return !(*attribute.getValues<APFloat>().begin()).isZero();
  return !(*attribute.getValues<APInt>().begin()).isZero();
}

/// A condition input: a one-element tensor known at compile time.
FailureOr<bool> conditionInput(NodeContext &node, unsigned index) {
  auto value = node.constantInput(index, "condition");
  if (failed(value))
    return failure();
  if (value->numElements() != 1)
    return node.error() << "the condition has shape " << formatShape(value->shape)
                        << "; expected one element";
  return value->asDouble(0) != 0.0;
}

LogicalResult importIf(NodeContext &node) {
  if (failed(node.requireInputs(1)))
    return failure();
  auto thenBranch = node.graphAttr("then_branch");
  auto elseBranch = node.graphAttr("else_branch");
  if (failed(thenBranch) || failed(elseBranch))
    return failure();
  auto condition = conditionInput(node, 0);
  if (failed(condition))
    return failure();
  const onnx::GraphProto &branch = *condition ? **thenBranch : **elseBranch;
  auto outputs = node.importSubgraph(branch, {});
  if (failed(outputs))
    return failure();
  if (outputs->size() != node.numOutputs())
    return node.error() << "the " << (*condition ? "then" : "else") << " branch has "
                        << outputs->size() << " outputs; expected one per output of the node ("
                        << node.numOutputs() << ")";
  for (auto [index, output] : llvm::enumerate(*outputs))
    node.setBinding(index, output);
  return success();
}

/// Scan output values, one per iteration, stacked along a new first dim.
FailureOr<Value> stack(NodeContext &node, ArrayRef<Value> items) {
  SmallVector<Value> rows;
  for (Value item : items) {
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, tensorType(item).getShape());
    auto row = reshapeTo(node, item, shape);
    if (failed(row))
      return failure();
    rows.push_back(*row);
  }
  return concatAxis(node, rows, 0);
}

LogicalResult importLoop(NodeContext &node) {
  auto body = node.graphAttr("body");
  if (failed(body))
    return failure();
  int64_t carried = static_cast<int64_t>(node.numInputs()) - 2;
  if (carried < 0)
    return node.error() << "Loop has " << node.numInputs()
                        << " inputs; expected the trip count and condition (either empty) first";
  int64_t scans = (*body)->output_size() - 1 - carried;
  if ((*body)->input_size() != carried + 2 || scans < 0)
    return node.error() << "the body has " << (*body)->input_size() << " inputs and "
                        << (*body)->output_size() << " outputs; expected " << carried + 2
                        << " inputs (iteration, condition, " << carried << " carried) and at least "
                        << carried + 1 << " outputs";
  if (static_cast<int64_t>(node.numOutputs()) > carried + scans)
    return node.error() << "Loop has " << node.numOutputs() << " outputs; expected at most "
                        << carried + scans << " (" << carried << " carried, " << scans
                        << " scanned)";

  std::optional<int64_t> tripCount;
  if (node.hasInput(0)) {
    auto count = node.integerInput(0, "trip count");
    if (failed(count))
      return failure();
    tripCount = std::max<int64_t>(0, *count);
  }
  bool running = true;
  if (node.hasInput(1)) {
    auto condition = conditionInput(node, 1);
    if (failed(condition))
      return failure();
    running = *condition;
  }
  if (!tripCount && !node.hasInput(1))
    return node.error() << "Loop has neither a trip count nor a condition; expected one of them "
                        << "to end it";

  auto i1 = IntegerType::get(node.context(), 1), i64 = IntegerType::get(node.context(), 64);
  Value condition = node.constant(DenseElementsAttr::get(RankedTensorType::get({}, i1), running));
  SmallVector<Binding> values;
  for (int64_t i = 0; i < carried; ++i) {
    if (!node.hasInput(2 + i))
      return node.error() << "loop-carried input " << 2 + i << " is empty; expected a value";
    values.push_back(node.binding(2 + i));
  }
  SmallVector<SmallVector<Value>> scanned(scans);
  int64_t iteration = 0;
  for (; running && (!tripCount || iteration < *tripCount); ++iteration) {
    if (iteration == kMaxUnrolledIterations)
      return node.error() << "the loop runs more than " << kMaxUnrolledIterations
                          << " iterations; expected at most that many to unroll";
    SmallVector<Binding> inputs = {
        Binding::of(node.constant(DenseElementsAttr::get(RankedTensorType::get({}, i64),
                                                         static_cast<int64_t>(iteration)))),
        Binding::of(condition)};
    inputs.append(values);
    auto outputs = node.importSubgraph(**body, inputs);
    if (failed(outputs))
      return failure();
    const Binding &next = outputs->front();
    if (next.isSequence())
      return node.error() << "the body's condition output is a sequence; expected a tensor";
    condition = next.tensor;
    if (std::optional<bool> flag = constantFlag(condition)) {
      running = *flag;
    } else if (!tripCount || node.hasInput(1)) {
      // With only a trip count (a for loop) ONNX ignores the body's condition.
      return node.error() << "the loop condition '" << (*body)->output(0).name()
                          << "' computed by the body in iteration " << iteration
                          << " must be known at compile time; it is computed from the model's "
                             "inputs";
    }
    values.assign(outputs->begin() + 1, outputs->begin() + 1 + carried);
    for (int64_t k = 0; k < scans; ++k) {
      const Binding &item = (*outputs)[1 + carried + k];
      if (item.isSequence())
        return node.error() << "scan output " << k << " is a sequence; expected a tensor";
      scanned[k].push_back(item.tensor);
    }
  }
  for (int64_t i = 0; i < carried; ++i)
    node.setBinding(i, values[i]);
  for (int64_t k = 0; k < scans; ++k) {
    if (!node.hasOutput(carried + k))
      continue;
    if (scanned[k].empty())
      return node.error() << "the loop runs no iteration, so scan output " << k
                          << " has no shape; expected at least one iteration";
    auto stacked = stack(node, scanned[k]);
    if (failed(stacked))
      return failure();
    node.setOutput(carried + k, *stacked);
  }
  return success();
}

} // namespace

void registerControlFlowImporters(OpImporterMap &map) {
  map["If"] = {importIf, 1};
  map["Loop"] = {importLoop, 1, /*takesSequences=*/true};
}

} // namespace shardc::import
