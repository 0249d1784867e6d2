//===- PipelineSchedule.cpp - each pipeline rank's actions, checked --------===//
#include "passes/Pipeline/Passes.h"
#include "passes/Pipeline/Schedule.h"

#include "dialects/Graph/GraphDialect.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace shardc::pipeline {
#define GEN_PASS_DEF_PIPELINESCHEDULEPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace shardc::pipeline

namespace shardc::pipeline {
namespace {

ActionKind kindOf(dist::ActionKind kind) {
  switch (kind) {
  case dist::ActionKind::forward:
    return ActionKind::Forward;
  case dist::ActionKind::backward_input:
    return ActionKind::BackwardInput;
  case dist::ActionKind::backward_weight:
    return ActionKind::BackwardWeight;
  case dist::ActionKind::send:
    return ActionKind::Send;
  case dist::ActionKind::recv:
    return ActionKind::Recv;
  case dist::ActionKind::update:
    return ActionKind::Update;
  }
  llvm_unreachable("every action kind is handled");
}

dist::ActionKind attrKindOf(ActionKind kind) {
  switch (kind) {
  case ActionKind::Forward:
    return dist::ActionKind::forward;
  case ActionKind::BackwardInput:
    return dist::ActionKind::backward_input;
  case ActionKind::BackwardWeight:
    return dist::ActionKind::backward_weight;
  case ActionKind::Send:
    return dist::ActionKind::send;
  case ActionKind::Recv:
    return dist::ActionKind::recv;
  case ActionKind::Update:
    return dist::ActionKind::update;
  }
  llvm_unreachable("every action kind is handled");
}

/// The module's transfers by id, each with one send and one receive of the
/// same type between the stages they name.
FailureOr<std::vector<Transfer>> collectTransfers(ModuleOp module, dist::PipelineOp pipeline) {
  std::map<int64_t, dist::SendOp> sends;
  std::map<int64_t, dist::RecvOp> recvs;
  bool duplicate = false;
  module.walk([&](Operation *op) {
    if (auto send = dyn_cast<dist::SendOp>(op))
      duplicate |= !sends.emplace(send.getTransferAttr().getInt(), send).second;
    if (auto recv = dyn_cast<dist::RecvOp>(op))
      duplicate |= !recvs.emplace(recv.getTransferAttr().getInt(), recv).second;
  });
  if (duplicate)
    return pipeline.emitError() << "a transfer is sent or received more than once";
  std::vector<Transfer> transfers;
  for (auto &[id, send] : sends) {
    auto recv = recvs.find(id);
    if (recv == recvs.end())
      return send.emitOpError() << "sends transfer " << id << ", which no stage receives";
    int64_t from = send->getParentOfType<func::FuncOp>()
                       ->getAttrOfType<IntegerAttr>(dist::kStageAttrName)
                       .getInt();
    if (recv->second.getFromStageAttr().getInt() != from ||
        recv->second.getType() != send.getInput().getType() ||
        send.getToStageAttr().getInt() != recv->second->getParentOfType<func::FuncOp>()
                                              ->getAttrOfType<IntegerAttr>(dist::kStageAttrName)
                                              .getInt())
      return recv->second.emitOpError()
             << "does not match the send of transfer " << id << " (stage " << from << " to "
             << send.getToStageAttr().getInt() << ", " << send.getInput().getType() << ")";
    if (id != int64_t(transfers.size()))
      return send.emitOpError() << "transfer ids must count from 0 without gaps; expected "
                                << transfers.size();
    transfers.push_back({from, send.getToStageAttr().getInt()});
  }
  for (auto &[id, recv] : recvs)
    if (!sends.count(id))
      return recv.emitOpError() << "receives transfer " << id << ", which no stage sends";
  return transfers;
}

/// `schedule` as dist.pipeline's `actions`: one list per pp rank.
ArrayAttr actionsAttr(MLIRContext *context, const Schedule &schedule) {
  SmallVector<Attribute> lists;
  for (const std::vector<Action> &actions : schedule) {
    SmallVector<Attribute> list;
    for (const Action &action : actions)
      list.push_back(dist::ActionAttr::get(context, attrKindOf(action.kind), action.stage,
                                           action.microbatch, action.transfer, action.level));
    lists.push_back(ArrayAttr::get(context, list));
  }
  return ArrayAttr::get(context, lists);
}

/// A training program's part as the schedule names it.
ActionKind partKind(func::FuncOp function) {
  auto part = function->getAttrOfType<StringAttr>(dist::kPartAttrName);
  StringRef name = part ? part.getValue() : "forward";
  if (name == "backward_input")
    return ActionKind::BackwardInput;
  if (name == "backward_weight")
    return ActionKind::BackwardWeight;
  if (name == "update")
    return ActionKind::Update;
  return ActionKind::Forward;
}

int64_t levelOf(func::FuncOp function) {
  auto level = function->getAttrOfType<IntegerAttr>(dist::kLevelAttrName);
  return level ? level.getInt() : 0;
}

int64_t stageOf(func::FuncOp function) {
  return function->getAttrOfType<IntegerAttr>(dist::kStageAttrName).getInt();
}

/// A training pipeline's transfers by id, each with the program that makes
/// it and the one that reads it.
FailureOr<std::vector<Transfer>> collectTrainingTransfers(ModuleOp module,
                                                          dist::PipelineOp pipeline) {
  std::map<int64_t, std::pair<dist::SendOp, dist::RecvOp>> ends;
  bool duplicate = false;
  module.walk([&](Operation *op) {
    if (auto send = dyn_cast<dist::SendOp>(op)) {
      auto &slot = ends[send.getTransferAttr().getInt()].first;
      duplicate |= bool(slot);
      slot = send;
    }
    if (auto recv = dyn_cast<dist::RecvOp>(op)) {
      auto &slot = ends[recv.getTransferAttr().getInt()].second;
      duplicate |= bool(slot);
      slot = recv;
    }
  });
  if (duplicate)
    return pipeline.emitError() << "a transfer is sent or received more than once";
  std::vector<Transfer> transfers;
  for (auto &[id, pair] : ends) {
    auto [send, recv] = pair;
    if (!send || !recv)
      return (send ? send.getOperation() : recv.getOperation())->emitOpError()
             << "transfer " << id << " has no " << (send ? "receive" : "send");
    auto maker = send->getParentOfType<func::FuncOp>();
    auto reader = recv->getParentOfType<func::FuncOp>();
    if (id != int64_t(transfers.size()))
      return send.emitOpError() << "transfer ids must count from 0 without gaps; expected "
                                << transfers.size();
    if (recv.getType() != send.getInput().getType() ||
        recv.getFromStageAttr().getInt() != stageOf(maker) ||
        send.getToStageAttr().getInt() != stageOf(reader))
      return recv.emitOpError() << "does not match the send of transfer " << id;
    transfers.push_back({stageOf(maker), stageOf(reader), partKind(maker), partKind(reader),
                         levelOf(maker), levelOf(reader)});
  }
  return transfers;
}

/// The schedule of a training pipeline (its functions cut by
/// shardc-pipeline-training-programs), or nothing before the cut.
LogicalResult scheduleTraining(ModuleOp module, dist::PipelineOp pipeline) {
  auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
  if (llvm::none_of(functions, [](func::FuncOp f) { return f->hasAttr(dist::kPartAttrName); }))
    return success();
  ScheduleSpec spec;
  spec.ranks = pipeline.getPipelineRanksAttr().getInt();
  spec.virtualStages = pipeline.getVirtualStagesAttr().getInt();
  spec.microbatches = pipeline.getMicrobatchesAttr().getInt();
  std::optional<ScheduleSpec::Kind> kind = parseScheduleKind(pipeline.getSchedule().str());
  if (!kind)
    return pipeline.emitError() << "unknown schedule '" << pipeline.getSchedule() << "'";
  spec.kind = *kind;
  spec.training = true;
  spec.updateLevels.assign(spec.stages(), 0);
  for (func::FuncOp function : functions)
    if (partKind(function) == ActionKind::Update)
      spec.updateLevels[stageOf(function)] =
          std::max(spec.updateLevels[stageOf(function)], levelOf(function) + 1);
  FailureOr<std::vector<Transfer>> transfers = collectTrainingTransfers(module, pipeline);
  if (failed(transfers))
    return failure();
  spec.transfers = std::move(*transfers);
  std::optional<std::string> error;
  Schedule schedule = buildSchedule(spec, &error);
  if (error)
    return pipeline.emitError() << *error;
  if (std::optional<std::string> wrong = checkSchedule(spec, schedule))
    return pipeline.emitError() << "the schedule cannot run: " << *wrong;
  pipeline.setActionsAttr(actionsAttr(module.getContext(), schedule));
  return success();
}

struct PipelineSchedulePass
    : OnThePipeline<PipelineSchedulePass, impl::PipelineSchedulePassBase<PipelineSchedulePass>> {
  LogicalResult run(ModuleOp module, dist::PipelineOp pipeline) {
    if (module->hasAttr(graph::kTrainingAttrName))
      return scheduleTraining(module, pipeline);
    std::set<int64_t> stages;
    for (auto function : module.getOps<func::FuncOp>()) {
      auto stage = function->getAttrOfType<IntegerAttr>(dist::kStageAttrName);
      if (!stage || stage.getInt() < 0 || stage.getInt() >= pipeline.getNumStages() ||
          !stages.insert(stage.getInt()).second)
        return function.emitError()
               << "expected one function per pipeline stage 0.." << pipeline.getNumStages() - 1
               << " (" << dist::kStageAttrName << "); run shardc-pipeline-stages first";
    }
    if (int64_t(stages.size()) != pipeline.getNumStages())
      return pipeline.emitError() << "has " << pipeline.getNumStages() << " stages but the module "
                                  << stages.size() << " stage functions";
    FailureOr<std::vector<Transfer>> transfers = collectTransfers(module, pipeline);
    if (failed(transfers))
      return failure();
    ScheduleSpec spec{pipeline.getPipelineRanksAttr().getInt(),
                      pipeline.getVirtualStagesAttr().getInt(),
                      pipeline.getMicrobatchesAttr().getInt(),
                      pipeline.getSchedule() == "interleaved", *transfers};
    Schedule schedule;
    if (std::optional<ArrayAttr> given = pipeline.getActions()) {
      for (Attribute list : *given) {
        schedule.emplace_back();
        for (auto action : cast<ArrayAttr>(list).getAsRange<dist::ActionAttr>())
          schedule.back().push_back({kindOf(action.getKind()), action.getStage(),
                                     action.getMicrobatch(), action.getTransfer()});
      }
    } else {
      schedule = buildSchedule(spec);
      pipeline.setActionsAttr(actionsAttr(module.getContext(), schedule));
    }
    if (std::optional<std::string> error = checkSchedule(spec, schedule))
      return pipeline.emitError() << "the schedule cannot run: " << *error;
    return success();
  }
};

} // namespace
} // namespace shardc::pipeline
