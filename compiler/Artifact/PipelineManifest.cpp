//===- PipelineManifest.cpp - a pipelined module's manifest section -------===//
#include "compiler/Artifact/PipelineManifest.h"

#include "compiler/Artifact/ElementTypes.h"
#include "dialects/Exec/ExecDialect.h"

#include <map>

using namespace mlir;

namespace shardc::artifact {
namespace {

/// The dim a caller's input or output is cut into micro-batches along.
std::optional<int64_t> microbatchDim(Operation *op) {
  if (auto dim = op->getAttrOfType<IntegerAttr>(dist::kMicrobatchDimAttrName))
    return dim.getInt();
  return std::nullopt;
}

/// A caller's tensor as a stage sees it, whole again: its micro-batch dim
/// times the micro-batches.
llvm::json::Object wholeEntry(StringRef name, Value buffer, std::optional<int64_t> dim,
                              int64_t microbatches) {
  llvm::json::Object entry = describeBuffer(name, buffer);
  if (dim) {
    llvm::json::Array *shape = entry.getArray("shape");
    (*shape)[*dim] = *(*shape)[*dim].getAsInteger() * microbatches;
  }
  return entry;
}

/// The runtime's gather of an output onto the output rank, as the manifest
/// gives it: {"dim", "axes"}; none when the program returns it whole.
std::optional<llvm::json::Object> gatherEntry(exec::OutputOp output) {
  auto axes = output->getAttrOfType<ArrayAttr>(dist::kGatherAxesAttrName);
  auto dim = output->getAttrOfType<IntegerAttr>(dist::kGatherDimAttrName);
  if (!axes || !dim)
    return std::nullopt;
  llvm::json::Array names;
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    names.push_back(axis);
  return llvm::json::Object{{"dim", dim.getInt()}, {"axes", std::move(names)}};
}

llvm::json::Value dimValue(std::optional<int64_t> dim) {
  return dim ? llvm::json::Value(*dim) : llvm::json::Value(nullptr);
}

const char *actionName(dist::ActionKind kind) {
  switch (kind) {
  case dist::ActionKind::forward:
    return "forward";
  case dist::ActionKind::backward_input:
    return "backward_input";
  case dist::ActionKind::backward_weight:
    return "backward_weight";
  case dist::ActionKind::send:
    return "send";
  case dist::ActionKind::recv:
    return "recv";
  case dist::ActionKind::update:
    return "update";
  }
  return "";
}

} // namespace

llvm::json::Object describeBuffer(StringRef name, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  llvm::json::Array shape;
  for (int64_t dim : type.getShape())
    shape.push_back(dim);
  return llvm::json::Object{
      {"name", name},
      {"dtype", rt::dtypeName(runtimeDType(type.getElementType()).value_or(rt::DType::F32))},
      {"shape", std::move(shape)}};
}

llvm::json::Array programSignature(func::FuncOp program, bool inputs) {
  // A program that runs its micro-batches itself (a training step) takes
  // the caller's inputs whole and cuts them.
  int64_t ownMicrobatches = 1;
  program.walk([&](exec::MicrobatchLoopEndOp end) { ownMicrobatches = end.getMicrobatches(); });
  std::map<int64_t, llvm::json::Object> byIndex;
  program.walk([&](Operation *op) {
    if (auto input = dyn_cast<exec::InputOp>(op); input && inputs) {
      llvm::json::Object entry = wholeEntry(input.getName(), input.getBuffer(),
                                            ownMicrobatches > 1 ? microbatchDim(input)
                                                                : std::nullopt,
                                            ownMicrobatches);
      if (input.getTransfer())
        entry["transfer"] = int64_t(*input.getTransfer());
      if (input->hasAttr(dist::kMicrobatchIndexAttrName))
        entry["microbatch_index"] = true;
      byIndex.emplace(input.getIndex(), std::move(entry));
    }
    if (auto output = dyn_cast<exec::OutputOp>(op); output && !inputs) {
      llvm::json::Object entry = describeBuffer(output.getName(), output.getBuffer());
      if (output.getTransfer())
        entry["transfer"] = int64_t(*output.getTransfer());
      if (std::optional<llvm::json::Object> gather = gatherEntry(output))
        entry["gather"] = std::move(*gather);
      byIndex.emplace(output.getIndex(), std::move(entry));
    }
  });
  llvm::json::Array entries;
  for (auto &[index, entry] : byIndex)
    entries.push_back(std::move(entry));
  return entries;
}

llvm::json::Object callerOutput(exec::OutputOp output, int64_t microbatches,
                                const sharding::MeshShape &mesh) {
  llvm::json::Object entry =
      wholeEntry(output.getName(), output.getBuffer(), microbatchDim(output), microbatches);
  std::optional<llvm::json::Object> gather = gatherEntry(output);
  if (!gather)
    return entry;
  int64_t pieces = 1;
  for (StringRef axis :
       output->getAttrOfType<ArrayAttr>(dist::kGatherAxesAttrName).getAsValueRange<StringAttr>())
    pieces *= mesh.sizes[*mesh.axis(axis)];
  int64_t dim = *gather->getInteger("dim");
  llvm::json::Array *shape = entry.getArray("shape");
  (*shape)[dim] = *(*shape)[dim].getAsInteger() * pieces;
  entry["gather"] = std::move(*gather);
  return entry;
}

llvm::json::Array callerOutputs(func::FuncOp program, const sharding::MeshShape &mesh) {
  std::map<int64_t, llvm::json::Object> byIndex;
  program.walk([&](exec::OutputOp output) {
    if (!output.getTransfer())
      byIndex.emplace(output.getIndex(), callerOutput(output, 1, mesh));
  });
  llvm::json::Array entries;
  for (auto &[index, entry] : byIndex)
    entries.push_back(std::move(entry));
  return entries;
}

FailureOr<PipelineSection> describePipeline(dist::PipelineOp pipeline,
                                            ArrayRef<func::FuncOp> stages, int64_t outputRank,
                                            const sharding::MeshShape &mesh) {
  int64_t microbatches = pipeline.getMicrobatchesAttr().getInt();
  PipelineSection section;
  llvm::json::Array inputs, outputs, transfers, programs, actions;
  std::map<std::string, std::optional<int64_t>> inputDims;
  std::map<int64_t, llvm::json::Object> transfersById;
  auto stageOf = [](func::FuncOp program) {
    return program->getAttrOfType<IntegerAttr>(dist::kStageAttrName).getInt();
  };
  for (func::FuncOp constProgram : stages) {
    func::FuncOp program = constProgram;
    const int64_t stage = stageOf(program);
    LogicalResult walked = success();
    program.walk([&](Operation *op) {
      if (auto input = dyn_cast<exec::InputOp>(op);
          input && !input.getTransfer() && !input->hasAttr(dist::kMicrobatchIndexAttrName)) {
        std::optional<int64_t> dim = microbatchDim(input);
        auto [known, added] = inputDims.emplace(input.getName().str(), dim);
        if (!added && known->second != dim)
          walked = input.emitOpError()
                   << "is cut into micro-batches along dim " << (dim ? *dim : -1)
                   << " here and along " << (known->second ? *known->second : -1) << " elsewhere";
        if (added) {
          section.inputs.push_back(
              wholeEntry(input.getName(), input.getBuffer(), dim, microbatches));
          inputs.push_back(
              llvm::json::Object{{"name", input.getName()}, {"microbatch_dim", dimValue(dim)}});
        }
      }
      if (auto output = dyn_cast<exec::OutputOp>(op)) {
        if (!output.getTransfer()) {
          std::optional<int64_t> dim = microbatchDim(output);
          section.outputs.push_back(callerOutput(output, microbatches, mesh));
          outputs.push_back(
              llvm::json::Object{{"name", output.getName()}, {"microbatch_dim", dimValue(dim)}});
          return;
        }
        llvm::json::Object entry = describeBuffer(output.getName(), output.getBuffer());
        entry.erase("name");
        entry["id"] = int64_t(*output.getTransfer());
        entry["from"] = int64_t(stage);
        transfersById.emplace(*output.getTransfer(), std::move(entry));
      }
    });
    if (failed(walked))
      return failure();
    llvm::json::Object entry{{"stage", stage},
                             {"inputs", programSignature(program, true)},
                             {"outputs", programSignature(program, false)}};
    if (auto part = program->getAttrOfType<StringAttr>(dist::kPartAttrName))
      entry["part"] = part.str();
    if (auto level = program->getAttrOfType<IntegerAttr>(dist::kLevelAttrName))
      entry["level"] = level.getInt();
    programs.push_back(std::move(entry));
  }
  for (func::FuncOp constProgram : stages) {
    func::FuncOp program = constProgram;
    program.walk([&](exec::InputOp input) {
      if (input.getTransfer())
        if (auto found = transfersById.find(*input.getTransfer()); found != transfersById.end())
          found->second["to"] = stageOf(program);
    });
  }
  for (auto &[id, entry] : transfersById)
    transfers.push_back(std::move(entry));
  for (Attribute list : pipeline.getActions().value_or(ArrayAttr())) {
    llvm::json::Array rankActions;
    for (auto action : cast<ArrayAttr>(list).getAsRange<dist::ActionAttr>()) {
      llvm::json::Object entry{{"op", actionName(action.getKind())},
                               {"microbatch", action.getMicrobatch()}};
      bool moves =
          action.getKind() == dist::ActionKind::send || action.getKind() == dist::ActionKind::recv;
      entry[moves ? "transfer" : "stage"] = moves ? action.getTransfer() : action.getStage();
      if (action.getKind() == dist::ActionKind::update) {
        entry.erase("microbatch");
        entry["level"] = action.getLevel();
      }
      rankActions.push_back(std::move(entry));
    }
    actions.push_back(std::move(rankActions));
  }
  section.pipeline =
      llvm::json::Object{{"stages", pipeline.getNumStages()},
                         {"microbatches", microbatches},
                         {"virtual_stages", pipeline.getVirtualStagesAttr().getInt()},
                         {"schedule", pipeline.getSchedule()},
                         {"inputs", std::move(inputs)},
                         {"outputs", std::move(outputs)},
                         {"transfers", std::move(transfers)},
                         {"programs", std::move(programs)},
                         {"actions", std::move(actions)},
                         {"output_rank", outputRank}};
  return section;
}

} // namespace shardc::artifact
