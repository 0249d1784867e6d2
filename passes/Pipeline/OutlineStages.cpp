//===- OutlineStages.cpp - one function per pipeline stage ----------------===//
#include "passes/Pipeline/OutlineStages.h"

#include "dialects/Dist/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace shardc::pipeline {
namespace {

class Outliner {
public:
  Outliner(func::FuncOp function, const StageProgram &program, ArrayRef<int64_t> stageOf,
           int64_t stages)
      : function(function), program(program), stageOf(stageOf), mappings(stages) {}

  SmallVector<func::FuncOp> run(int64_t stages) {
    OpBuilder builder(function);
    FunctionType type = function.getFunctionType();
    for (int64_t stage = 0; stage < stages; ++stage) {
      bool last = stage == stages - 1;
      auto outlined = builder.create<func::FuncOp>(
          function.getLoc(), ("stage" + Twine(stage)).str(),
          builder.getFunctionType(type.getInputs(), last ? type.getResults() : TypeRange()));
      for (NamedAttribute attr : function->getDiscardableAttrs())
        outlined->setAttr(attr.getName(), attr.getValue());
      outlined->setAttr(dist::kStageAttrName, builder.getI64IntegerAttr(stage));
      if (ArrayAttr args = function.getArgAttrsAttr())
        outlined.setArgAttrsAttr(args);
      if (ArrayAttr results = function.getResAttrsAttr(); results && last)
        outlined.setResAttrsAttr(results);
      Block *entry = outlined.addEntryBlock();
      for (auto [original, argument] : llvm::zip(function.getArguments(), entry->getArguments()))
        mappings[stage].map(original, argument);
      functions.push_back(outlined);
    }
    for (auto [index, op] : llvm::enumerate(program.sequence)) {
      int64_t stage = stageOf[index];
      OpBuilder at = OpBuilder::atBlockEnd(&functions[stage].getBody().front());
      for (Value operand : op->getOperands())
        materialize(at, operand, stage);
      at.clone(*op, mappings[stage]);
    }
    Operation *terminator = function.getBody().front().getTerminator();
    int64_t lastStage = stages - 1;
    OpBuilder at = OpBuilder::atBlockEnd(&functions[lastStage].getBody().front());
    SmallVector<Value> results;
    for (Value operand : terminator->getOperands())
      results.push_back(materialize(at, operand, lastStage));
    at.create<func::ReturnOp>(function.getLoc(), results);
    for (int64_t stage = 0; stage < lastStage; ++stage)
      OpBuilder::atBlockEnd(&functions[stage].getBody().front())
          .create<func::ReturnOp>(function.getLoc());
    // A stage takes only the inputs it reads; the first takes them all, so
    // that the stages together keep the program's signature in its order.
    for (func::FuncOp outlined : llvm::drop_begin(functions))
      eraseUnusedArguments(outlined);
    function.erase();
    return functions;
  }

private:
  /// `value` in `stage`'s function, made there (a copy of a placed op) or
  /// received from the stage that computes it.
  Value materialize(OpBuilder &at, Value value, int64_t stage) {
    IRMapping &mapping = mappings[stage];
    if (Value mapped = mapping.lookupOrNull(value))
      return mapped;
    Operation *producer = value.getDefiningOp();
    if (program.placed.contains(producer)) {
      for (Value operand : producer->getOperands())
        materialize(at, operand, stage);
      at.clone(*producer, mapping);
      return mapping.lookup(value);
    }
    int64_t from = stageOf[program.position.lookup(producer)];
    int64_t transfer = transfers++;
    auto recv = at.create<dist::RecvOp>(value.getLoc(), value.getType(), from, transfer);
    if (dist::ShardingAttr sharding = dist::getResultSharding(value))
      dist::setResultShardings(recv, {sharding});
    Block &sender = functions[from].getBody().front();
    OpBuilder::atBlockEnd(&sender).create<dist::SendOp>(
        value.getLoc(), mappings[from].lookup(value), stage, transfer);
    mapping.map(value, recv.getResult());
    return recv.getResult();
  }

  func::FuncOp function;
  const StageProgram &program;
  ArrayRef<int64_t> stageOf;
  std::vector<IRMapping> mappings;
  SmallVector<func::FuncOp> functions;
  int64_t transfers = 0;
};

} // namespace

void eraseUnusedArguments(func::FuncOp function) {
  llvm::BitVector unused(function.getNumArguments());
  for (BlockArgument argument : function.getArguments())
    if (argument.use_empty())
      unused.set(argument.getArgNumber());
  function.eraseArguments(unused);
}

SmallVector<func::FuncOp> outlineStages(func::FuncOp function, const StageProgram &program,
                                        ArrayRef<int64_t> stageOf, int64_t stages) {
  return Outliner(function, program, stageOf, stages).run(stages);
}

} // namespace shardc::pipeline
