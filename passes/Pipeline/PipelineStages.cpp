//===- PipelineStages.cpp - cut the program into pipeline stages ----------===//
#include "passes/Pipeline/OutlineStages.h"
#include "passes/Pipeline/Passes.h"
#include "passes/Pipeline/Schedule.h"
#include "passes/Pipeline/TrainingStages.h"

#include "dialects/Graph/GraphDialect.h"
#include "dialects/Graph/NodeLocation.h"
#include "passes/Sharding/ShardingConversion.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace shardc::sharding;

namespace shardc::pipeline {
#define GEN_PASS_DEF_PIPELINESTAGESPASS
#include "passes/Pipeline/Passes.h.inc"
} // namespace shardc::pipeline

namespace shardc::pipeline {
namespace {

/// The first and last ONNX node of sequence ops [begin, end), for messages.
std::string nodeSpan(const StageProgram &program, size_t begin, size_t end) {
  auto name = [&](size_t index) {
    std::string names = graph::onnxNodeNames(program.sequence[index]->getLoc());
    return names.empty() ? std::string("an unnamed op") : "'" + names + "'";
  };
  return "ONNX nodes " + name(begin) + " to " + name(end - 1);
}

/// The names of the ONNX nodes `location` holds, each whole: a name may
/// hold a comma (onnxNodeNames joins them with ", ").
SmallVector<StringRef> nodeNamesOf(Location location) {
  SmallVector<StringRef> names;
  location->walk([&](Location inner) {
    if (auto node = graph::onnxNodeOf(inner); node && !node->opType.empty())
      names.push_back(node->name);
    return WalkResult::advance();
  });
  return names;
}

/// Where each --pp-split node ends: after the last op computing it.
FailureOr<std::vector<size_t>> forcedCuts(dist::PipelineOp pipeline, const StageProgram &program) {
  std::vector<size_t> cuts;
  for (StringRef node : pipeline.getSplits().getAsValueRange<StringAttr>()) {
    std::optional<size_t> after;
    // A name the flag cut at its commas, when `node` is one of its pieces.
    StringRef withComma;
    for (auto [index, op] : llvm::enumerate(program.sequence))
      for (StringRef name : nodeNamesOf(op->getLoc())) {
        if (name == node)
          after = index + 1;
        SmallVector<StringRef> pieces;
        name.split(pieces, ',');
        if (withComma.empty() && pieces.size() > 1 && llvm::is_contained(pieces, node))
          withComma = name;
      }
    if (!after && !withComma.empty())
      return pipeline.emitError() << "--pp-split '" << node << "': no ONNX node of that name; '"
                                  << withComma << "' has a comma in its name: write it as '"
                                  << llvm::join(llvm::split(withComma, ','), "\\,") << "'";
    if (!after)
      return pipeline.emitError() << "--pp-split '" << node
                                  << "': no op of the program computes an ONNX node of that name";
    if (*after == program.sequence.size())
      return pipeline.emitError() << "--pp-split '" << node
                                  << "': the program ends there; no stage would follow the cut";
    cuts.push_back(*after);
  }
  return cuts;
}

StageProblem::Recompute recomputePolicy(dist::PipelineOp pipeline) {
  StringRef recompute = pipeline.getRecompute();
  return recompute == "full"   ? StageProblem::Recompute::Full
         : recompute == "auto" ? StageProblem::Recompute::Auto
                               : StageProblem::Recompute::Selective;
}

struct PipelineStagesPass
    : OnThePipeline<PipelineStagesPass, impl::PipelineStagesPassBase<PipelineStagesPass>> {
  using OnThePipeline::OnThePipeline;

  LogicalResult run(ModuleOp module, dist::PipelineOp pipeline) {
    auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
    if (llvm::any_of(functions, [](func::FuncOp f) { return f->hasAttr(dist::kStageAttrName); }))
      return pipeline.emitError() << "the module is already cut into stages (functions with "
                                  << dist::kStageAttrName
                                  << "); give the program before the cut (--emit=graph)";
    if (functions.size() != 1)
      return pipeline.emitError() << "expects one program to cut into stages, found "
                                  << functions.size() << " functions";
    func::FuncOp function = functions.front();
    FailureOr<dist::MeshOp> meshOp = findMesh(module);
    FailureOr<DeviceModel> model = DeviceModel::load(device, module);
    if (failed(meshOp) || failed(model))
      return failure();
    MeshShape mesh = *meshOp ? meshShapeOf(*meshOp) : MeshShape{};
    // A training step's forward ops are cut; the rest follows them.
    const bool training = module->hasAttr(graph::kTrainingAttrName);
    std::optional<TrainingStageProgram> trainingProgram;
    if (training)
      trainingProgram =
          analyzeTrainingStageProgram(function, mesh, *model, pipeline.getMicrobatchesAttr().getInt(),
                                      recomputePolicy(pipeline));
    StageProgram program =
        training ? std::move(trainingProgram->forward) : analyzeStageProgram(function, mesh, *model);
    StageProblem &problem = program.problem;
    problem.stages = pipeline.getNumStages();
    problem.pipelineRanks = pipeline.getPipelineRanksAttr().getInt();
    problem.virtualStages = pipeline.getVirtualStagesAttr().getInt();
    problem.microbatches = pipeline.getMicrobatchesAttr().getInt();
    problem.interleaved = pipeline.getSchedule() == "interleaved";
    // A rank holds V stages: each gets its share of the device.
    int64_t budget = deviceMemory > 0 ? int64_t(deviceMemory) : model->memoryBytes;
    problem.memoryBudget = budget / problem.virtualStages;
    const Link &link = stageLink(mesh, *model);
    problem.linkLatencySeconds = link.latencySeconds;
    problem.linkBytesPerSecond = link.bytesPerSecond;
    // A training schedule keeps each stage's activations for as many
    // micro-batches as its pp rank has in flight (1F1B: P - p).
    if (training) {
      std::optional<ScheduleSpec::Kind> kind = parseScheduleKind(pipeline.getSchedule().str());
      if (kind)
        problem.inFlight = chainInFlight(*kind, problem.pipelineRanks, problem.virtualStages,
                                         problem.microbatches);
      if (pipeline.getSchedule() == "1f1b" && problem.microbatches < problem.pipelineRanks)
        pipeline.emitWarning() << "--schedule 1f1b with " << problem.microbatches
                               << (problem.microbatches == 1 ? " micro-batch" : " micro-batches")
                               << " on " << problem.pipelineRanks
                               << " pipeline ranks runs as fill-drain (GPipe): give at least "
                               << problem.pipelineRanks << " micro-batches to overlap them";
      if (problem.inFlight.size() != size_t(problem.stages))
        return pipeline.emitError() << "the " << pipeline.getSchedule()
                                    << " schedule cannot order " << problem.stages
                                    << " stages and " << problem.microbatches << " micro-batches";
    }
    FailureOr<std::vector<size_t>> forced = forcedCuts(pipeline, program);
    if (failed(forced))
      return failure();
    problem.forcedCuts = *forced;

    StageSearchResult result = searchStages(problem);
    if (result.overMemory) {
      const StageFigures &stage = *result.overMemory;
      const int64_t inFlight = problem.inFlight.empty()
                                   ? problem.microbatches
                                   : problem.inFlight[result.overMemoryStage];
      return pipeline.emitError() << "stage " << result.overMemoryStage << " ("
                                  << nodeSpan(program, stage.begin, stage.end) << ") needs "
                                  << formatBytes(double(stage.memoryBytes())) << " (weights "
                                  << formatBytes(double(stage.weightBytes)) << ", activations of "
                                  << inFlight
                                  << (inFlight == 1 ? " micro-batch" : " micro-batches")
                                  << " in flight " << formatBytes(double(stage.activationBytes))
                                  << (stage.recomputed ? ", its forward computed again by its "
                                                         "backward"
                                                       : "")
                                  << ") but a stage may hold "
                                  << formatBytes(double(problem.memoryBudget))
                                  << " in the best cut of " << problem.stages
                                  << " stages; give more stages or devices"
                                  << (training && problem.recompute ==
                                                      StageProblem::Recompute::Selective
                                          ? ", or --recompute auto"
                                          : "");
    }
    if (!result.plan)
      return pipeline.emitError() << result.error;

    std::vector<int64_t> stageOf(program.sequence.size());
    for (auto [stage, figures] : llvm::enumerate(result.plan->stages))
      for (size_t op = figures.begin; op < figures.end; ++op)
        stageOf[op] = int64_t(stage);
    Builder builder(module.getContext());
    auto estimate = [&](const StageFigures &figures) {
      SmallVector<NamedAttribute> entries = {
          builder.getNamedAttr("seconds", builder.getF64FloatAttr(figures.seconds)),
          builder.getNamedAttr("send_seconds", builder.getF64FloatAttr(figures.sendSeconds)),
          builder.getNamedAttr("weight_bytes", builder.getI64IntegerAttr(figures.weightBytes)),
          builder.getNamedAttr("activation_bytes",
                               builder.getI64IntegerAttr(figures.activationBytes))};
      // A training stage's activations kept per micro-batch in flight.
      if (training)
        entries.push_back(
            builder.getNamedAttr("kept_bytes", builder.getI64IntegerAttr(figures.keptBytes)));
      return builder.getDictionaryAttr(entries);
    };
    if (training) {
      // The step is cut into programs after partitioning, when its sums
      // over the micro-batches have become accumulators (docs/pipeline.md).
      trainingProgram->forward = std::move(program);
      tagTrainingStages(*trainingProgram, stageOf, problem.stages, mesh);
      SmallVector<Attribute> estimates;
      SmallVector<bool> recomputed;
      for (const StageFigures &figures : result.plan->stages) {
        estimates.push_back(estimate(figures));
        recomputed.push_back(figures.recomputed);
      }
      pipeline->setAttr(dist::kStageEstimateAttrName, builder.getArrayAttr(estimates));
      pipeline->setAttr(dist::kRecomputedStagesAttrName, builder.getDenseBoolArrayAttr(recomputed));
    } else {
      SmallVector<func::FuncOp> stages = outlineStages(function, program, stageOf, problem.stages);
      for (auto [outlined, figures] : llvm::zip(stages, result.plan->stages))
        outlined->setAttr(dist::kStageEstimateAttrName, estimate(figures));
    }
    pipeline->setAttr(dist::kStepSecondsAttrName,
                      builder.getF64FloatAttr(result.plan->stepSeconds));
    return success();
  }
};

} // namespace
} // namespace shardc::pipeline
