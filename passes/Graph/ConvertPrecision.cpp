//===- ConvertPrecision.cpp - float32 storage to bf16 / fp16 --------------===//
#include "passes/Graph/Passes.h"

#include "dialects/Graph/ConstEval/FloatFormats.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;

namespace shardc::graph {
#define GEN_PASS_DEF_CONVERTPRECISIONPASS
#include "passes/Graph/Passes.h.inc"
} // namespace shardc::graph

namespace shardc::graph {
namespace {

bool isFloat32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

RankedTensorType withElement(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

class Conversion {
public:
  Conversion(FloatType target, bool masterWeights) : target(target), masterWeights(masterWeights) {}

  void run(func::FuncOp function) {
    Block &entry = function.getBody().front();
    OpBuilder builder(function.getContext());
    builder.setInsertionPointToStart(&entry);
    // Inputs arrive as float32 (the signature stays): cast them on entry.
    for (BlockArgument argument : function.getArguments()) {
      if (!isFloat32Tensor(argument.getType()))
        continue;
      auto cast = builder.create<CastOp>(argument.getLoc(), withElement(argument.getType(), target),
                                         argument);
      argument.replaceAllUsesExcept(cast, cast);
      converted.insert(cast);
    }
    function.walk([&](Operation *op) { convert(op); });
    // Results leave as float32, as the signature says.
    Operation *ret = entry.getTerminator();
    builder.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Type declared = function.getResultTypes()[operand.getOperandNumber()];
      if (operand.get().getType() != declared)
        operand.set(builder.create<CastOp>(ret->getLoc(), declared, operand.get()));
    }
  }

private:
  void convert(Operation *op) {
    if (converted.contains(op) || isa<func::ReturnOp, func::FuncOp>(op))
      return;
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
          dense && isFloat32Tensor(dense.getType())) {
        constant.setValueAttr(convertConstant(dense));
        constant.getResult().setType(withElement(constant.getType(), target));
      }
      return;
    }
    if (auto weight = dyn_cast<WeightOp>(op)) {
      if (masterWeights && isFloat32Tensor(weight.getType()) && !weight.getStoredType()) {
        readThroughCast(weight);
        return;
      }
      if (isFloat32Tensor(weight.getType())) {
        if (!weight.getStoredType())
          weight.setStoredType(weight.getType().getElementType());
        weight.getResult().setType(withElement(weight.getType(), target));
      }
      return;
    }
    for (Value result : op->getResults())
      if (isFloat32Tensor(result.getType()))
        result.setType(withElement(result.getType(), target));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          if (isFloat32Tensor(argument.getType()))
            argument.setType(withElement(argument.getType(), target));
  }

  /// A training step's fp32 master: it stays float32, and its uses read a
  /// cast of it to the compute type (shardc-split-weight-casts gives each
  /// use its own once the step is built).
  void readThroughCast(WeightOp weight) {
    OpBuilder builder(weight->getContext());
    builder.setInsertionPointAfter(weight);
    auto cast = builder.create<CastOp>(weight.getLoc(), withElement(weight.getType(), target),
                                       weight.getResult());
    weight.getResult().replaceAllUsesExcept(cast, cast);
    weight->setAttr(kComputeTypeAttrName, TypeAttr::get(target));
    converted.insert(cast);
  }

  /// Rounds to nearest even, saturating at the largest finite value: masks
  /// written as float32's lowest must stay finite (an all-masked row would
  /// otherwise turn into NaNs).
  DenseElementsAttr convertConstant(DenseElementsAttr value) {
    bool half = target.isF16();
    double largest = half ? 65504.0 : 3.3895313892515355e38;
    return value.mapValues(target, [&](const APFloat &element) {
      double x = element.convertToFloat();
      if (std::isfinite(x))
        x = std::clamp(x, -largest, largest);
      return APInt(16, half ? constfold::f16Bits(x) : constfold::bf16Bits(x));
    });
  }

  FloatType target;
  bool masterWeights;
  llvm::SmallPtrSet<Operation *, 8> converted;
};

struct ConvertPrecisionPass : impl::ConvertPrecisionPassBase<ConvertPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType target;
    if (dtype == "bf16")
      target = FloatType::getBF16(context);
    else if (dtype == "f16")
      target = FloatType::getF16(context);
    else {
      getOperation().emitError() << "dtype '" << dtype << "': expected bf16 or f16";
      return signalPassFailure();
    }
    for (func::FuncOp function : getOperation().getOps<func::FuncOp>())
      Conversion(target, masterWeights).run(function);
  }
};

} // namespace
} // namespace shardc::graph
