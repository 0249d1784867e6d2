//===- VjpCheck.cpp - a gradient rule against central differences ---------===//
#include "test/unit/passes/Autodiff/VjpCheck.h"

#include "dialects/Graph/ConstantConversion.h"
#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/GraphOps.h"
#include "passes/Autodiff/VjpRules.h"
#include "test/unit/passes/Autodiff/GraphEvaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace mlir;

namespace shardc::autodiff::check {
namespace {

/// FNV-1a: a seed per case that is the same on every platform.
uint64_t seedOf(const std::string &title) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : title)
    hash = (hash ^ uint8_t(c)) * 1099511628211ull;
  return hash;
}

HostTensor sample(RankedTensorType type, Sampling sampling, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> magnitude =
      sampling == Sampling::Positive ? std::uniform_real_distribution<double>(0.5, 1.5)
                                     : std::uniform_real_distribution<double>(0.25, 1.25);
  std::vector<double> values(type.getNumElements());
  for (double &value : values)
    value = magnitude(rng) * (sampling == Sampling::Signed && rng() % 2 ? -1 : 1);
  return HostTensor::fromFloats(constfold::ScalarType::F64,
                                {type.getShape().begin(), type.getShape().end()}, values);
}

bool isF64(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType().isF64();
}

/// The op under test: the one defining @f's return values.
Operation *testedOp(ModuleOp module) {
  auto function = module.lookupSymbol<func::FuncOp>("f");
  if (!function || function.getBody().empty())
    return nullptr;
  Operation *terminator = function.getBody().front().getTerminator();
  if (terminator->getNumOperands() == 0)
    return nullptr;
  Operation *op = terminator->getOperand(0).getDefiningOp();
  for (Value returned : terminator->getOperands())
    if (returned.getDefiningOp() != op)
      return nullptr;
  return op;
}

/// sum over the results of <cotangent, plus - minus> / 2h (an integer
/// result's cotangent is empty).
double centralDifference(const std::vector<HostTensor> &cotangents,
                         const std::vector<HostTensor> &plus,
                         const std::vector<HostTensor> &minus) {
  double sum = 0;
  for (size_t result = 0; result < cotangents.size(); ++result)
    for (size_t m = 0; m < cotangents[result].floats.size(); ++m)
      sum += cotangents[result].floats[m] * (plus[result].floats[m] - minus[result].floats[m]);
  return sum / (2 * kStep);
}

} // namespace

void prepareContext(MLIRContext &context) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  context.printOpOnDiagnostic(false);
}

std::string testedOpName(MLIRContext &context, const VjpCase &vjpCase) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(vjpCase.source, &context);
  Operation *op = module ? testedOp(*module) : nullptr;
  return op ? op->getName().getStringRef().str() : "";
}

VjpReport checkVjp(MLIRContext &context, const VjpCase &vjpCase, std::optional<unsigned> only) {
  VjpReport report;
  std::string diagnostics;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(vjpCase.source, &context);
  Operation *op = module ? testedOp(*module) : nullptr;
  if (!op) {
    report.error = "the source is not one op's @f: " + diagnostics;
    return report;
  }
  report.opName = op->getName().getStringRef().str();
  Block &body = *op->getBlock();
  Operation *terminator = body.getTerminator();

  std::mt19937_64 rng(seedOf(vjpCase.title));
  llvm::DenseMap<Value, HostTensor> values;
  for (BlockArgument argument : body.getArguments()) {
    if (!isF64(argument)) {
      report.error = "argument " + std::to_string(argument.getArgNumber()) + " is not f64";
      return report;
    }
    values[argument] = sample(cast<RankedTensorType>(argument.getType()), vjpCase.sampling, rng);
  }
  SmallVector<Operation *> forward;
  for (Operation &each : body.without_terminator())
    forward.push_back(&each);
  if (std::string error = evaluateAll(forward, values); !error.empty()) {
    report.error = "forward: " + error;
    return report;
  }

  SmallVector<bool> needed;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    auto argument = dyn_cast<BlockArgument>(operand);
    bool differentiable = argument && !llvm::is_contained(vjpCase.held, argument.getArgNumber());
    if (differentiable)
      report.differentiable.push_back(unsigned(index));
    needed.push_back(differentiable && (!only || *only == index));
  }

  // The rule's ops go before the return, after the op and every forward op.
  OpBuilder builder(terminator);
  GradientBuilder gradients(builder, op->getLoc());
  SmallVector<Value> resultGrads;
  std::vector<HostTensor> cotangents;
  for (Value result : op->getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    HostTensor cotangent =
        isF64(result) ? sample(type, Sampling::Signed, rng)
                      : HostTensor::splatInt(*graph::toScalarType(type.getElementType()),
                                             {type.getShape().begin(), type.getShape().end()}, 0);
    resultGrads.push_back(builder.create<graph::ConstantOp>(
        op->getLoc(), cast<ElementsAttr>(graph::toElementsAttr(cotangent, &context))));
    // An integer result (top-k's indices) has no cotangent to weigh it by.
    cotangents.push_back(isF64(result) ? std::move(cotangent) : HostTensor());
  }
  VjpCall call{op, resultGrads, needed, gradients, {}};
  if (failed(buildVjp(call))) {
    report.error = "the rule was refused: " + diagnostics;
    return report;
  }
  SmallVector<Operation *> backward;
  for (Operation *each = op->getNextNode(); each != terminator; each = each->getNextNode())
    backward.push_back(each);
  if (std::string error = evaluateAll(backward, values); !error.empty()) {
    report.error = "the rule's ops: " + error;
    return report;
  }

  std::vector<HostTensor> point;
  for (Value operand : op->getOperands())
    point.push_back(values[operand]);
  for (auto [index, wanted] : llvm::enumerate(needed)) {
    if (!wanted)
      continue;
    const HostTensor &gradient = values[call.operandGrads[index]];
    if (gradient.shape != point[index].shape) {
      report.error = "the gradient of operand " + std::to_string(index) + " is " +
                     gradient.toString(0) + ", not of the operand's shape";
      return report;
    }
    double worst = 0, largest = 0;
    for (size_t k = 0; k < point[index].floats.size(); ++k) {
      std::vector<HostTensor> plus = point, minus = point, plusOut, minusOut;
      plus[index].floats[k] += kStep;
      minus[index].floats[k] -= kStep;
      std::string error = evaluate(op, plus, plusOut);
      if (error.empty())
        error = evaluate(op, minus, minusOut);
      if (!error.empty()) {
        report.error = "perturbed: " + error;
        return report;
      }
      double difference = centralDifference(cotangents, plusOut, minusOut);
      worst = std::max(worst, std::fabs(gradient.floats[k] - difference));
      largest = std::max(largest, std::fabs(difference));
    }
    report.operands.push_back({unsigned(index), largest > 0 ? worst / largest : worst, largest});
  }
  return report;
}

bool registryHasRule(MLIRContext &context, OperationName name) {
  OpBuilder builder(&context);
  Location location = builder.getUnknownLoc();
  auto type = RankedTensorType::get({2, 2}, builder.getF64Type());
  OwningOpRef<ModuleOp> module = ModuleOp::create(location);
  builder.setInsertionPointToEnd(module->getBody());
  auto function = builder.create<func::FuncOp>(
      location, "probe", builder.getFunctionType({type, type, type}, {}));
  Block *body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  OperationState state(location, name);
  state.addOperands(body->getArguments());
  state.addTypes({type, type});
  Operation *bare = builder.create(state);

  std::string diagnostics;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
    diagnostics += diagnostic.str();
    return success();
  });
  GradientBuilder gradients(builder, location);
  SmallVector<Value> resultGrads(bare->getResults());
  SmallVector<bool> needed(bare->getNumOperands(), false);
  VjpCall call{bare, resultGrads, needed, gradients, {}};
  (void)buildVjp(call);
  return diagnostics.find("has no gradient rule") == std::string::npos;
}

} // namespace shardc::autodiff::check
