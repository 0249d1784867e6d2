//===- Matchers.cpp - shared helpers of the raising patterns --------------===//
#include "passes/Graph/Matchers.h"

#include "dialects/Graph/WeightBytes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

using namespace mlir;

namespace shardc::graph {

std::optional<double> splatValue(Value value) {
  DenseElementsAttr attribute;
  if (!value || !matchPattern(value, m_Constant(&attribute)) || !attribute.isSplat())
    return std::nullopt;
  Type element = attribute.getElementType();
  if (isa<FloatType>(element))
    return attribute.getSplatValue<APFloat>().convertToDouble();
  if (element.isInteger(1))
    return attribute.getSplatValue<bool>() ? 1.0 : 0.0;
  if (isa<IntegerType>(element))
    return static_cast<double>(attribute.getSplatValue<APInt>().getSExtValue());
  return std::nullopt;
}

std::optional<DenseElementsAttr> compileTimeValue(Value value, WeightValues &weights,
                                                  int64_t maxElements) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape() || type.getNumElements() > maxElements)
    return std::nullopt;
  DenseElementsAttr values;
  if (matchPattern(value, m_Constant(&values)))
    return values;
  auto weight = value.getDefiningOp<WeightOp>();
  if (!weight)
    return std::nullopt;
  auto [known, added] = weights.try_emplace(weight, std::nullopt);
  if (added) {
    ScopedDiagnosticHandler quiet(weight->getContext(), [](Diagnostic &) { return success(); });
    if (FailureOr<DenseElementsAttr> read = readWeight(weight); succeeded(read))
      known->second = *read;
  }
  return known->second;
}

bool isAllZeros(Value value, WeightValues &weights, int64_t maxElements) {
  std::optional<DenseElementsAttr> values = compileTimeValue(value, weights, maxElements);
  if (!values)
    return false;
  if (isa<FloatType>(values->getElementType()))
    return llvm::all_of(values->getValues<APFloat>(), [](const APFloat &x) { return x.isZero(); });
  if (isa<IntegerType>(values->getElementType()))
    return llvm::all_of(values->getValues<APInt>(), [](const APInt &x) { return x.isZero(); });
  return false;
}

bool isSplat(Value value, double expected) {
  std::optional<double> actual = splatValue(value);
  return actual && std::abs(*actual - expected) <= 1e-4 * std::max(1.0, std::abs(expected));
}

bool isParameter(Value value) {
  return value && (value.getDefiningOp<WeightOp>() || value.getDefiningOp<ConstantOp>());
}

Value otherOperand(Operation *op, Value known) {
  if (!op || op->getNumOperands() != 2)
    return {};
  Value a = op->getOperand(0), b = op->getOperand(1);
  if (a == known && b != known)
    return b;
  if (b == known && a != known)
    return a;
  return {};
}

Operation *soleUser(Value value) {
  return value && value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

namespace {
void collectTerms(Value value, Type type, bool isRoot, SmallVectorImpl<Value> &terms) {
  auto add = producer<AddOp>(value);
  if (add && (isRoot || value.hasOneUse()) && add.getLhs().getType() == type &&
      add.getRhs().getType() == type) {
    collectTerms(add.getLhs(), type, false, terms);
    collectTerms(add.getRhs(), type, false, terms);
    return;
  }
  terms.push_back(value);
}
} // namespace

void sumTerms(Value root, SmallVectorImpl<Value> &terms) {
  collectTerms(root, root.getType(), true, terms);
}

namespace {
void collectFactors(Value value, bool isRoot, Product &product) {
  if (std::optional<double> constant = splatValue(value)) {
    product.scale *= *constant;
    return;
  }
  bool inner = isRoot || value.hasOneUse();
  if (auto mul = producer<MulOp>(value); mul && inner) {
    collectFactors(mul.getLhs(), false, product);
    collectFactors(mul.getRhs(), false, product);
    return;
  }
  if (auto div = producer<DivOp>(value); div && inner) {
    if (std::optional<double> divisor = splatValue(div.getRhs()); divisor && *divisor != 0) {
      collectFactors(div.getLhs(), false, product);
      product.scale /= *divisor;
      return;
    }
  }
  product.factors.push_back(value);
}
} // namespace

Product flattenProduct(Value root) {
  Product product;
  collectFactors(root, /*isRoot=*/true, product);
  return product;
}

} // namespace shardc::graph

namespace shardc::graph {

bool replaceIfSameType(Value root, Value replacement) {
  if (root.getType() != replacement.getType()) {
    replacement.getDefiningOp()->erase();
    return false;
  }
  root.replaceAllUsesWith(replacement);
  return true;
}

void eraseDeadOps(Operation *root) {
  bool changed = true;
  while (changed) {
    changed = false;
    root->walk<WalkOrder::PostOrder, ReverseIterator>([&](Operation *op) {
      if (op != root && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
}

} // namespace shardc::graph
