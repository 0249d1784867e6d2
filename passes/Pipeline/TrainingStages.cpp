//===- TrainingStages.cpp - the stage of every op of a training step ------===//
#include "passes/Pipeline/TrainingStages.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/TrainingPhase.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::pipeline {
namespace {

class StageTagger {
public:
  StageTagger(const TrainingStageProgram &program, ArrayRef<int64_t> stageOf, int64_t stages,
              const sharding::MeshShape &mesh)
      : program(program), stageOf(stageOf), lastStage(stages - 1), mesh(mesh) {}

  void run() {
    llvm::DenseMap<int64_t, int64_t> stageOfId;
    for (auto [position, op] : llvm::enumerate(program.forward.sequence)) {
      stage[op] = stageOf[position];
      if (auto id = op->getAttrOfType<IntegerAttr>(graph::kOpIdAttrName))
        stageOfId[id.getInt()] = stageOf[position];
    }
    SmallVector<Operation *> deferred;
    for (Operation *op : program.others) {
      if (graph::phaseOf(op) == graph::Phase::Optimizer) {
        if (std::optional<int64_t> at = largestOperandStage(op))
          stage[op] = *at;
        else
          deferred.push_back(op);
        continue;
      }
      std::optional<int64_t> owner;
      if (auto id = op->getAttrOfType<IntegerAttr>(graph::kVjpOfAttrName))
        if (auto found = stageOfId.find(id.getInt()); found != stageOfId.end())
          owner = found->second;
      std::optional<int64_t> before = earliestGradient(op);
      if (owner)
        stage[op] = before ? std::min(*owner, *before) : *owner;
      else if (before)
        stage[op] = *before;
      else
        deferred.push_back(op);
    }
    // Users first: what reads no gradient and belongs to no rule (a
    // reshard of a forward value for the backward, an optimizer state's
    // decay) runs on the latest stage that reads it.
    for (Operation *op : llvm::reverse(deferred)) {
      std::optional<size_t> owner = program.forwardOwner(op);
      stage[op] = latestUser(op).value_or(owner ? stageOf[*owner] : lastStage);
    }
    Builder builder(program.forward.sequence.empty()
                        ? program.others.front()->getContext()
                        : program.forward.sequence.front()->getContext());
    for (auto &[op, at] : stage)
      op->setAttr(dist::kPipelineStageAttrName, builder.getI64IntegerAttr(at));
  }

private:
  /// The stage a value is made on: its op's, a weight's home; none when
  /// placed elsewhere (constants, what only the inputs derive).
  std::optional<int64_t> stageOfValue(Value value) const {
    Operation *producer = value.getDefiningOp();
    if (!producer)
      return std::nullopt;
    if (auto found = stage.find(producer); found != stage.end())
      return found->second;
    if (auto weight = program.home.find(producer); weight != program.home.end())
      return stageOf[weight->second];
    return std::nullopt;
  }

  /// The earliest stage among the backward values `op` reads, or none.
  std::optional<int64_t> earliestGradient(Operation *op) const {
    std::optional<int64_t> earliest;
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || program.forward.position.count(producer))
        continue;
      if (auto found = stage.find(producer); found != stage.end())
        earliest = std::min(earliest.value_or(lastStage), found->second);
    }
    return earliest;
  }

  std::optional<int64_t> latestUser(Operation *op) const {
    std::optional<int64_t> latest;
    for (Operation *user : op->getUsers())
      if (auto found = stage.find(user); found != stage.end())
        latest = std::max(latest.value_or(0), found->second);
    return latest;
  }

  std::optional<int64_t> largestOperandStage(Operation *op) const {
    int64_t best = -1, bestBytes = -1;
    for (Value operand : op->getOperands()) {
      std::optional<int64_t> at = stageOfValue(operand);
      if (!at || !isa<RankedTensorType>(operand.getType()))
        continue;
      int64_t bytes = localBytes(operand, mesh);
      if (bytes > bestBytes || (bytes == bestBytes && *at > best)) {
        best = *at;
        bestBytes = bytes;
      }
    }
    if (best < 0)
      return std::nullopt;
    return best;
  }

  const TrainingStageProgram &program;
  ArrayRef<int64_t> stageOf;
  int64_t lastStage;
  const sharding::MeshShape &mesh;
  llvm::DenseMap<Operation *, int64_t> stage;
};

} // namespace

void tagTrainingStages(const TrainingStageProgram &program, ArrayRef<int64_t> stageOf,
                       int64_t stages, const sharding::MeshShape &mesh) {
  StageTagger(program, stageOf, stages, mesh).run();
}

} // namespace shardc::pipeline
