//===- LowerToExec.cpp - graph program to exec kernel steps ---------------===//
#include "passes/Lowering/Passes.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/NodeLocation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace shardc;

namespace shardc::lowering {
#define GEN_PASS_DEF_LOWERTOEXECPASS
#include "passes/Lowering/Passes.h.inc"
} // namespace shardc::lowering

namespace {

MemRefType bufferType(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// The kernel that computes a graph op: its mnemonic ("graph.add" -> "add").
StringRef kernelName(Operation *op) { return op->getName().stripDialect(); }

class FunctionLowering {
public:
  explicit FunctionLowering(func::FuncOp function) : function(function) {}

  LogicalResult run() {
    OpBuilder builder(function);
    auto lowered = builder.create<func::FuncOp>(function.getLoc(), function.getName(),
                                                builder.getFunctionType({}, {}));
    lowered->setAttrs(function->getAttrs());
    lowered.setFunctionType(builder.getFunctionType({}, {}));
    lowered.removeArgAttrsAttr();
    lowered.removeResAttrsAttr();
    builder.setInsertionPointToStart(lowered.addEntryBlock());
    for (BlockArgument argument : function.getArguments()) {
      auto name = function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), "graph.name");
      mapping.map(argument, builder.create<exec::InputOp>(
                                argument.getLoc(), bufferType(argument.getType()),
                                name ? name.getValue() : "input" + std::to_string(argument.getArgNumber()),
                                argument.getArgNumber()));
    }
    for (Operation &op : function.getBody().front())
      if (failed(lower(builder, op)))
        return failure();
    function.erase();
    return success();
  }

private:
  LogicalResult lower(OpBuilder &builder, Operation &op) {
    Location location = op.getLoc();
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      mapping.map(constant.getResult(),
                  builder.create<exec::ConstantOp>(location, bufferType(constant.getType()),
                                                   "constant." + std::to_string(constants++),
                                                   constant.getValue()));
      return success();
    }
    if (auto weight = dyn_cast<graph::WeightOp>(op)) {
      mapping.map(weight.getResult(),
                  builder.create<exec::WeightOp>(location, bufferType(weight.getType()),
                                                 weight.getName(), weight.getFile(),
                                                 weight.getOffset(), weight.getSize()));
      return success();
    }
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
      mapping.map(reshape.getResult(),
                  builder.create<exec::ViewOp>(location, bufferType(reshape.getType()),
                                               mapping.lookup(reshape.getInput())));
      return success();
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        auto name = function.getResultAttrOfType<StringAttr>(index, "graph.name");
        builder.create<exec::OutputOp>(location,
                                       name ? name.getValue() : "output" + std::to_string(index),
                                       index, mapping.lookup(value));
      }
      builder.create<func::ReturnOp>(location);
      return success();
    }
    if (isa<graph::CompositeOp>(op))
      return op.emitOpError() << "must be inlined before lowering (run shardc-inline-composites)";
    if (op.getDialect() != op.getContext()->getLoadedDialect<graph::GraphDialect>())
      return op.emitOpError() << "cannot be lowered to exec";
    SmallVector<Value> inputs, outputs;
    for (Value operand : op.getOperands())
      inputs.push_back(mapping.lookup(operand));
    for (Value result : op.getResults()) {
      Value buffer = builder.create<exec::AllocOp>(location, bufferType(result.getType()),
                                                   IntegerAttr());
      mapping.map(result, buffer);
      outputs.push_back(buffer);
    }
    builder.create<exec::KernelOp>(location, kernelName(&op), inputs, outputs,
                                   op.getAttrDictionary(),
                                   graph::onnxNodeNames(location));
    return success();
  }

  func::FuncOp function;
  IRMapping mapping;
  int64_t constants = 0;
};

struct LowerToExecPass : shardc::lowering::impl::LowerToExecPassBase<LowerToExecPass> {
  void runOnOperation() override {
    for (func::FuncOp function : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(FunctionLowering(function).run()))
        return signalPassFailure();
  }
};

} // namespace
