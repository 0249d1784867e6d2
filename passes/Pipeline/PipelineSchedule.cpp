//===- PipelineSchedule.cpp - each pipeline rank's actions, checked --------===//
#include "passes/Pipeline/Passes.h"
#include "passes/Pipeline/Schedule.h"

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

struct PipelineSchedulePass
    : OnThePipeline<PipelineSchedulePass, impl::PipelineSchedulePassBase<PipelineSchedulePass>> {
  LogicalResult run(ModuleOp module, dist::PipelineOp pipeline) {
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
      MLIRContext *context = module.getContext();
      SmallVector<Attribute> lists;
      for (const std::vector<Action> &actions : schedule) {
        SmallVector<Attribute> list;
        for (const Action &action : actions)
          list.push_back(dist::ActionAttr::get(context, attrKindOf(action.kind), action.stage,
                                               action.microbatch, action.transfer));
        lists.push_back(ArrayAttr::get(context, list));
      }
      pipeline.setActionsAttr(ArrayAttr::get(context, lists));
    }
    if (std::optional<std::string> error = checkSchedule(spec, schedule))
      return pipeline.emitError() << "the schedule cannot run: " << *error;
    return success();
  }
};

} // namespace
} // namespace shardc::pipeline
