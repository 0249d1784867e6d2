//===- ReportWriter.cpp - collectives, memory and time of a plan ----------===//
#include "compiler/Report/ReportWriter.h"

#include "compiler/Report/FormatSeconds.h"
#include "compiler/Report/ModelLayers.h"
#include "compiler/Report/PipelineReport.h"
#include "compiler/Report/UniformSplit.h"

#include "passes/Pipeline/StageProgram.h"
#include "passes/Sharding/RoutedExchange.h"
#include "passes/Sharding/ShardingConversion.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ModelStateBytes.h"
#include "dialects/Graph/NodeLocation.h"
#include "dialects/Graph/TrainingPhase.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace shardc::sharding;

namespace shardc::report {
namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

/// A collective of a reshard, or a pipeline transfer's send or receive.
struct Collective {
  std::string kind;
  std::vector<std::string> axes;
  int64_t bytes;   ///< the buffer per device
  int64_t traffic; ///< what it moves per device
  double seconds;
  bool overTensorAxis; ///< over tp alone: a layer's tensor-parallel traffic
  std::string source;
  std::string module; ///< the torch module of the source, when known
  size_t position;    ///< op index in the program (stages in order)
  std::optional<unsigned> layer;
  std::string phase; ///< of a training step (StepPart); empty otherwise
};

/// A compute op or a reshard, at its place in the program.
struct PricedOp {
  double seconds;
  std::string module;
  size_t position;
  size_t stage;
  /// A training step's backward or update op: it names a layer its stage
  /// runs the gradient of, which says nothing of the stage's own layers.
  bool backward = false;
};

/// The stage functions in stage order, or the one function.
FailureOr<SmallVector<func::FuncOp>> programFunctions(ModuleOp module, dist::PipelineOp pipeline) {
  auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
  // A training pipeline is reported before it is cut into programs: its
  // ops carry their stages (dist.pipeline_stage).
  if (!pipeline || module->hasAttr(graph::kTrainingAttrName)) {
    if (functions.size() != 1)
      return module.emitError() << "expected one function to report on, got " << functions.size();
    return SmallVector<func::FuncOp>(functions);
  }
  SmallVector<func::FuncOp> stages(size_t(pipeline.getNumStages()));
  for (func::FuncOp function : functions) {
    auto stage = function->getAttrOfType<IntegerAttr>(dist::kStageAttrName);
    if (!stage || stage.getInt() < 0 || stage.getInt() >= int64_t(stages.size()) ||
        stages[size_t(stage.getInt())])
      return function.emitError() << "expected a distinct " << dist::kStageAttrName << " below "
                                  << stages.size() << " on every function of a pipelined module";
    stages[size_t(stage.getInt())] = function;
  }
  if (llvm::is_contained(stages, func::FuncOp()))
    return pipeline.emitError() << "expected one function per stage";
  return stages;
}

class ReportBuilder {
public:
  /// The ZeRO stage the plan was made for (graph.zero_stage; 0: none).
  int64_t zeroStage = 0;

  ReportBuilder(ArrayRef<func::FuncOp> functions, dist::MeshOp meshOp, dist::PipelineOp pipeline,
                const DeviceModel &device, bool training)
      : functions(functions), mesh(meshOp ? meshShapeOf(meshOp) : MeshShape{}), pipeline(pipeline),
        device(device), training(training) {
    // A training step in micro-batches (no pipeline) runs its forward and
    // backward once per micro-batch (docs/training.md).
    if (std::optional<unsigned> axis = mesh.axis(rt::kMicroBatchAxis);
        axis && training && !pipeline)
      loopRuns = mesh.sizes[*axis];
  }

  LogicalResult run() {
    if (pipeline && training)
      return runTrainingPipeline();
    if (pipeline)
      readSchedule();
    size_t position = 0;
    for (auto [index, function] : llvm::enumerate(functions)) {
      stage = index;
      stages.emplace_back();
      liveBytes = 0;
      for (BlockArgument argument : function.getArguments())
        sharding[argument] = ValueSharding::replicated(tensorType(argument).getRank());
      for (Operation &op : function.getBody().front()) {
        ++position;
        if (failed(visit(op, position)))
          return failure();
      }
      if (pipeline && failed(readEstimate(function)))
        return failure();
    }
    assignLayers();
    return success();
  }

  llvm::json::Value json() const;
  std::string summary(bool priced) const;

  /// The parts of a training step, in program order, and the dp sums.
  static constexpr const char *kParts[] = {"forward", "backward", "grad_sync", "optimizer"};

private:
  struct RankMemory {
    int64_t paramBytes = 0, activationBytes = 0;
    /// A training step's: what the rank holds between steps.
    int64_t gradBytes = 0, optimizerBytes = 0;
    /// ZeRO-3's weights gathered in flight, at their peak (apart from the
    /// activations, whose peak falls elsewhere: the sum bounds the peak).
    int64_t gatheredBytes = 0;
    int64_t total() const {
      return paramBytes + activationBytes + gradBytes + optimizerBytes + gatheredBytes;
    }
  };
  /// What global rank `rank` holds: in a pipeline, its pp rank's stages.
  RankMemory rankMemory(int64_t rank) const;

  struct PartFigures {
    double computeSeconds = 0, commSeconds = 0;
    int64_t commBytes = 0, trafficBytes = 0;
    std::map<std::string, int> kinds;
  };
  PartFigures partFigures(StringRef part) const;
  /// What the estimated step's seconds go to (StepBreakdown).
  StepBreakdown stepBreakdown(double step, double gatherSeconds) const;
  /// The step's model and hardware FLOPs, and what the estimated step makes
  /// of them: TFLOP/s per device and model FLOPs utilization.
  void addThroughput(llvm::json::Object &totals, double step, int64_t devices) const;
  /// What the plan moves per device over the data-parallel ranks for one
  /// purpose, beside the analytic volume of that purpose: `dp` ranks, in
  /// ZeRO groups of `group` (all of them but with --zero-group).
  struct DpVolume {
    int64_t dp, group, trafficBytes;
    double analyticBytes;
  };
  /// The gradient sums: a ring all-reduce of every gradient byte,
  /// 2 grad_bytes (d-1)/d, or from ZeRO stage 2 a reduce-scatter; with
  /// HSDP's groups of g (r = d/g of them), a reduce-scatter in each group
  /// and an all-reduce of the slices across them, (g-1)/g + 2(r-1)/(rg).
  std::optional<DpVolume> gradSync() const;
  /// ZeRO's weight gathers over dp (the new weights after the update at
  /// stages 1 and 2, the stored slices where the step uses them at 3) and
  /// one all-gather of every weight, W (d-1)/d (twice at stage 3).
  std::optional<DpVolume> weightGathers() const;
  llvm::json::Value trainingJson() const;
  llvm::json::Value layerPartsJson(unsigned layer) const;

  LogicalResult visit(Operation &op, size_t position) {
    if (isa<func::ReturnOp>(op))
      return success();
    if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
      std::optional<ValueSharding> to = fromAttr(reshard.getSharding(), mesh);
      // Gathering what the program returns belongs to no layer, even when
      // the last layer's op (a post-LN norm) computed it; over the
      // micro-batches and the leading batch axes the runtime gathers it,
      // not the devices (listed apart, in result_gathers).
      bool returned = llvm::all_of(reshard->getUsers(),
                                   [](Operation *user) { return isa<func::ReturnOp>(user); });
      ValueSharding from = sharding.lookup(reshard.getInput());
      SmallVector<int64_t> shape(reshard.getType().getShape());
      int64_t width = graph::elementByteWidth(reshard.getType().getElementType());
      if (returned)
        if (std::optional<RuntimeGather> gather = returnedByRuntime(from, shape, mesh))
          noteResultGather(reshard, *gather, width);
      auto steps = to ? planReshard(from, *to, shape, mesh) : std::nullopt;
      if (!steps)
        return reshard.emitOpError() << "cannot be planned";
      std::string module = returned ? std::string() : graph::onnxModuleOf(reshard.getLoc());
      std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
      double seconds = 0;
      std::string part = training ? collectivePart(reshard) : std::string();
      for (CollectiveStep step : *steps) {
        if (step.kind == CollectiveKind::AllSlice)
          continue;
        // A sum over micro-batches is an accumulation across the loop's
        // runs (or a pipeline's micro-batches): only its sum over the other
        // axes is a collective, once after the loop, with the update.
        int64_t runs = runsPerStep(part);
        bool afterLoop = false;
        if (std::optional<unsigned> microbatches = mesh.axis(rt::kMicroBatchAxis);
            microbatches && llvm::is_contained(step.axes, *microbatches)) {
          llvm::erase(step.axes, *microbatches);
          if (step.axes.empty())
            continue;
          runs = 1;
          afterLoop = true;
        }
        std::vector<std::string> axes;
        for (unsigned axis : step.axes)
          axes.push_back(mesh.names[axis]);
        double stepSeconds = collectiveSeconds(step, width, mesh, device);
        StageReport &owner = stages[stage];
        bool perMicrobatch = !afterLoop && (part.empty() || part == "forward" || part == "backward");
        (!perMicrobatch        ? owner.updateComm
         : part == "backward" ? owner.backwardComm
                              : owner.forwardComm)[collectiveName(step.kind)] += stepSeconds;
        for (int64_t run = 0; run < runs; ++run) {
          seconds += stepSeconds;
          collectives.push_back(
              {collectiveName(step.kind), axes, collectivePayloadBytes(step, width),
               collectiveTrafficBytes(step, width, mesh), stepSeconds,
               tp && step.axes == AxisList{*tp}, graph::onnxNodeNames(reshard.getLoc()), module,
               position, std::nullopt, part});
        }
      }
      stages[stage].commSeconds += seconds;
      priced.push_back({seconds, module, position, stage, !isForward(&op)});
      noteNode(op);
      sharding[reshard.getResult()] = *to;
      live(reshard.getResult(), op);
      return success();
    }
    if (auto send = dyn_cast<dist::SendOp>(op))
      return visitSend(send, position);
    if (auto recv = dyn_cast<dist::RecvOp>(op))
      return visitRecv(recv, position);
    auto annotated = op.getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    int64_t shards = 1;
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      ValueSharding value = ValueSharding::replicated(tensorType(result).getRank());
      if (annotated) {
        std::optional<ValueSharding> parsed =
            fromAttr(cast<dist::ShardingAttr>(annotated[index]), mesh);
        if (!parsed)
          return op.emitOpError() << "has a sharding the mesh does not fit";
        value = *parsed;
      }
      sharding[result] = value;
      if (index == 0) {
        for (const AxisList &axes : value.dims)
          shards *= mesh.groupSize(axes);
        shards *= mesh.groupSize(value.partial);
      }
    }
    // Norms that read the stream split over tp: sequence parallelism.
    if (isa<graph::LayerNormOp, graph::RmsNormOp>(op))
      if (std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis))
        sequenceParallel |= sharding[op.getResult(0)].splitsOver(*tp);
    if (isa<graph::WeightOp>(op)) {
      Value result = op.getResult(0);
      int64_t bytes = tensorBytes(sharding[result].localShape(tensorType(result).getShape(), mesh),
                                  tensorType(result).getElementType());
      // A training step's optimizer state is not a weight; each trained
      // weight has a gradient of its own shape and type, and the fp32
      // master of a mixed-precision step counts with the optimizer's state
      // (docs/training.md).
      if (!graph::trainRole(&op).empty()) {
        graph::ModelStateBytes state = graph::modelStateBytes(&op, double(bytes));
        std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
        auto gradients =
            int64_t(graph::zeroGradientBytes(state.gradients, zeroStage, dp ? mesh.sizes[*dp] : 1));
        gradBytes += gradients;
        optimizerBytes += int64_t(state.states);
        stages[stage].gradBytes += gradients;
        stages[stage].optimizerBytes += int64_t(state.states);
        if (graph::trainRole(&op) == graph::kTrainParam)
          stages[stage].parameters += tensorType(result).getNumElements();
        bytes = int64_t(state.weights);
      }
      paramBytes += bytes;
      stages[stage].paramBytes += bytes;
      return success();
    }
    if (isa<graph::ConstantOp>(op))
      return success();
    modules.push_back(graph::onnxModuleOf(op.getLoc()));
    noteNode(op);
    if (isa<graph::AttentionOp>(op)) {
      attentions.push_back({position, &op});
      attentionStage[&op] = stage;
    }
    const int64_t runs = runsPerStep(partOf(&op));
    double opFlopsLocal = double(runs) * opFlops(&op) / double(shards);
    flops += opFlopsLocal;
    if (isForward(&op))
      noteForwardFlops(op, runs, stage);
    int64_t bytes = 0;
    for (Value value : op.getOperands())
      bytes += localBytes(value);
    for (Value value : op.getResults())
      bytes += localBytes(value);
    SmallVector<int64_t> localResult;
    if (op.getNumResults() > 0)
      if (auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType()))
        localResult = sharding[op.getResult(0)].localShape(type.getShape(), mesh);
    double seconds = double(runs) * opSeconds(&op, shards, bytes, localResult, device);
    computeSeconds += seconds;
    if (training) {
      graph::Phase phase = graph::phaseOf(&op).value_or(graph::Phase::Forward);
      partComputeSeconds[phaseName(phase).str()] += seconds;
      StageReport &figures = stages[stage];
      (phase == graph::Phase::Forward    ? figures.forwardSeconds
       : phase == graph::Phase::Backward ? figures.backwardSeconds
                                         : figures.updateSeconds) += seconds;
    }
    stages[stage].computeSeconds += seconds;
    priced.push_back({seconds, modules.back(), position, stage, !isForward(&op)});
    for (Value result : op.getResults())
      live(result, op);
    if (auto moe = dyn_cast<graph::MoeOp>(op))
      visitMoe(moe, position);
    return success();
  }

  /// The model's forward FLOPs over the whole step (every micro-batch and
  /// data-parallel rank, each piece once) as published counts take them
  /// (modelFlops: contractions, attention whole); by stage, and those
  /// computed in 16 bits.
  void noteForwardFlops(Operation &op, int64_t runs, size_t stage) {
    if (op.getNumResults() == 0 || !isa<RankedTensorType>(op.getResult(0).getType()))
      return;
    double whole = double(runs) * modelFlops(&op);
    // An op of the micro-batch loop on the whole batch computes one
    // micro-batch's slice a run; a pipeline stage's, on one micro-batch,
    // runs once for each.
    std::optional<unsigned> microbatches = mesh.axis(rt::kMicroBatchAxis);
    if (microbatches && sharding[op.getResult(0)].splitsOver(*microbatches))
      whole /= double(mesh.sizes[*microbatches]);
    if (pipeline)
      whole *= double(pipeline.getMicrobatchesAttr().getInt());
    forwardFlops += whole;
    stages[stage].forwardFlops += whole;
    Type element = tensorType(op.getResult(0)).getElementType();
    if (element.isBF16() || element.isF16())
      forwardFlops16 += whole;
  }

  /// Routed experts: the exchange they run inside (an all-to-all each way,
  /// counted with the collectives) and what each device holds for them.
  void visitMoe(graph::MoeOp moe, size_t position) {
    const AxisList &expertAxes = sharding[moe.getDownWeight()].dims[0];
    const ValueSharding &tokens = sharding[moe.getInput()];
    RankedTensorType input = moe.getInput().getType();
    int64_t localTokens = tokens.localShape(input.getShape(), mesh)[0];
    int64_t members = mesh.groupSize(expertAxes);
    int64_t localExperts = int64_t(moe.getExperts()) / members;
    int64_t slots = moe.getIndices().getType().getDimSize(1);
    bool exchange = !expertAxes.empty() && llvm::all_of(expertAxes, [&](unsigned axis) {
      return llvm::is_contained(tokens.dims[0], axis);
    });
    int64_t width = graph::elementByteWidth(input.getElementType());
    std::vector<std::string> axes;
    for (unsigned axis : expertAxes)
      axes.push_back(mesh.names[axis]);
    std::string source = graph::onnxNodeNames(moe.getLoc());
    std::string module = graph::onnxModuleOf(moe.getLoc());
    int64_t perDirection = 0;
    if (exchange) {
      CollectiveStep step = routedExchangeStep(moe, localTokens, expertAxes);
      double seconds = collectiveSeconds(step, width, mesh, device);
      for (int direction = 0; direction < 2; ++direction)
        collectives.push_back({collectiveName(step.kind), axes, collectivePayloadBytes(step, width),
                               collectiveTrafficBytes(step, width, mesh), seconds, false, source,
                               module, position, std::nullopt, partOf(moe)});
      stages[stage].commSeconds += 2 * seconds;
      priced.push_back({2 * seconds, module, position, stage, !isForward(moe)});
      // Uniform routing: of each device's entries, (P - 1) / P leave it.
      perDirection = localTokens * slots * input.getDimSize(1) * width * (members - 1) / members;
    }
    int64_t weightBytes = 0;
    for (Value weight : moe.getWeights())
      weightBytes += localBytes(weight);
    int64_t rows = moeRowBound(members, localTokens, slots, localExperts, exchange,
                               int64_t(moe.getCapacity()));
    llvm::json::Array axisList;
    for (const std::string &axis : axes)
      axisList.push_back(axis);
    experts.push_back(llvm::json::Object{{"source", source},
                                         {"experts", int64_t(moe.getExperts())},
                                         {"expert_axes", std::move(axisList)},
                                         {"exchange", exchange},
                                         {"tokens_per_device", localTokens},
                                         {"top_k", slots},
                                         {"capacity", int64_t(moe.getCapacity())},
                                         {"rows_per_device", rows},
                                         {"padding_rows", rows - localTokens * slots},
                                         {"sent_bytes_per_direction", perDirection},
                                         {"expert_weight_bytes_per_device", weightBytes}});
  }

  /// The stage's first and last ONNX node, over the ops it prices (a
  /// training step's forward ops: its backward runs the same nodes again).
  void noteNode(Operation &op) {
    std::string names = graph::onnxNodeNames(op.getLoc());
    if (names.empty() ||
        (training && graph::phaseOf(&op).value_or(graph::Phase::Forward) != graph::Phase::Forward))
      return;
    if (stages[stage].firstNode.empty())
      stages[stage].firstNode = names;
    stages[stage].lastNode = names;
  }

  /// A stage's send: its block of the value to the rank of the later stage
  /// with the same dp and tp coordinates, once per micro-batch.
  LogicalResult visitSend(dist::SendOp send, size_t position) {
    Value value = send.getInput();
    Operation *producer = value.getDefiningOp();
    std::string source = producer ? graph::onnxNodeNames(producer->getLoc()) : std::string();
    std::string module = producer ? graph::onnxModuleOf(producer->getLoc()) : std::string();
    int64_t bytes = localBytes(value);
    double seconds = link().latencySeconds + double(bytes) / link().bytesPerSecond;
    auto id = int64_t(send.getTransfer());
    sendOf[id] = collectives.size();
    transfers.push_back({id, int64_t(stage), int64_t(send.getToStage()), source, bytes, seconds});
    collectives.push_back({"send",
                           {rt::kPipelineAxis},
                           bytes,
                           bytes,
                           seconds,
                           false,
                           source,
                           module,
                           position,
                           std::nullopt,
                           std::string()});
    release(*send);
    return success();
  }

  /// The receiving end of a transfer: its time and traffic are the send's.
  LogicalResult visitRecv(dist::RecvOp recv, size_t position) {
    Value result = recv.getResult();
    auto annotated = recv->getAttrOfType<ArrayAttr>(dist::kShardingsAttrName);
    std::optional<ValueSharding> parsed =
        annotated ? fromAttr(cast<dist::ShardingAttr>(annotated[0]), mesh)
                  : ValueSharding::replicated(tensorType(result).getRank());
    if (!parsed)
      return recv.emitOpError() << "has a sharding the mesh does not fit";
    sharding[result] = *parsed;
    auto send = sendOf.find(int64_t(recv.getTransfer()));
    if (send == sendOf.end())
      return recv.emitOpError() << "receives transfer " << recv.getTransfer()
                                << " that no earlier stage sends";
    // Copied out first: the push may move the send's entry.
    Collective sent = collectives[send->second];
    collectives.push_back({"recv",
                           {rt::kPipelineAxis},
                           localBytes(result),
                           0,
                           0.0,
                           false,
                           sent.source,
                           sent.module,
                           position,
                           std::nullopt,
                           std::string()});
    live(result, *recv);
    return success();
  }

  /// The link between stages, as shardc-pipeline-stages prices it.
  const Link &link() const { return pipeline::stageLink(mesh, device); }

  /// The ranks of one stage: the mesh without the micro-batch axis.
  int64_t stageRanks() const { return devicesOfStages(mesh, 1).devices(); }

  /// The devices: pp outermost, then the stage mesh less the micro-batch axis.
  MeshShape deviceMesh() const {
    return devicesOfStages(mesh, pipeline ? schedule.pipelineRanks : 1);
  }

  void readSchedule() {
    schedule.schedule = pipeline.getSchedule().str();
    schedule.recompute = pipeline.getRecompute().str();
    schedule.training = training;
    schedule.pipelineRanks = pipeline.getPipelineRanksAttr().getInt();
    schedule.virtualStages = pipeline.getVirtualStagesAttr().getInt();
    schedule.microbatches = pipeline.getMicrobatchesAttr().getInt();
    schedule.stageRanks = stageRanks();
    if (auto step = pipeline->getAttrOfType<FloatAttr>(dist::kStepSecondsAttrName))
      schedule.stepSeconds = step.getValueAsDouble();
  }

  /// The stage whose update writes `op`, trained storage of a training
  /// pipeline (its graph.assign's tag); none for any other op.
  static std::optional<size_t> writingStage(Operation &op) {
    if (!isa<graph::WeightOp>(op) || graph::trainRole(&op).empty())
      return std::nullopt;
    for (Operation *user : op.getUsers())
      if (isa<graph::AssignOp>(user))
        if (auto tag = user->getAttrOfType<IntegerAttr>(dist::kPipelineStageAttrName))
          return size_t(tag.getInt());
    return std::nullopt;
  }

  /// A training pipeline's one step function, each op on the stage its tag
  /// names (TrainingStages.h; untagged ops, which only the inputs and
  /// weights derive, count with the op before them).
  LogicalResult runTrainingPipeline() {
    readSchedule();
    func::FuncOp function = functions.front();
    auto estimates = pipeline->getAttrOfType<ArrayAttr>(dist::kStageEstimateAttrName);
    if (!estimates || int64_t(estimates.size()) != pipeline.getNumStages())
      return pipeline.emitError() << "expected one " << dist::kStageEstimateAttrName
                                  << " per stage (run shardc-pipeline-stages)";
    stages.resize(estimates.size());
    for (BlockArgument argument : function.getArguments())
      sharding[argument] = ValueSharding::replicated(tensorType(argument).getRank());
    size_t position = 0;
    stage = 0;
    for (Operation &op : function.getBody().front()) {
      if (auto tag = op.getAttrOfType<IntegerAttr>(dist::kPipelineStageAttrName))
        stage = size_t(tag.getInt());
      ++position;
      // Trained storage (a master, its copy, an optimizer state) lives on
      // the stage that writes it, wherever the step declares it.
      size_t walking = stage;
      if (std::optional<size_t> written = writingStage(op))
        stage = *written;
      if (failed(visit(op, position)))
        return failure();
      stage = walking;
    }
    for (stage = 0; stage < stages.size(); ++stage)
      if (failed(readEstimate(pipeline, cast<DictionaryAttr>(estimates[stage]))))
        return failure();
    if (auto recomputed =
            pipeline->getAttrOfType<DenseBoolArrayAttr>(dist::kRecomputedStagesAttrName)) {
      if (recomputed.size() != int64_t(stages.size()))
        return pipeline.emitError() << "expected one " << dist::kRecomputedStagesAttrName
                                    << " flag per stage";
      for (auto [index, flag] : llvm::enumerate(recomputed.asArrayRef()))
        stages[index].recomputed = flag;
    }
    assignLayers();
    return success();
  }

  LogicalResult readEstimate(func::FuncOp function) {
    return readEstimate(function,
                        function->getAttrOfType<DictionaryAttr>(dist::kStageEstimateAttrName));
  }

  LogicalResult readEstimate(Operation *at, DictionaryAttr estimate) {
    auto number = [&](StringRef key) -> std::optional<double> {
      if (!estimate)
        return std::nullopt;
      if (auto real = estimate.getAs<FloatAttr>(key))
        return real.getValueAsDouble();
      if (auto integer = estimate.getAs<IntegerAttr>(key))
        return double(integer.getInt());
      return std::nullopt;
    };
    auto seconds = number("seconds"), send = number("send_seconds"),
         activation = number("activation_bytes");
    if (!seconds || !send || !activation)
      return at->emitError() << "expected " << dist::kStageEstimateAttrName
                                  << " with seconds, send_seconds and activation_bytes";
    stages[stage].seconds = *seconds;
    stages[stage].sendSeconds = *send;
    stages[stage].activationBytes = int64_t(*activation);
    stages[stage].keptBytes = int64_t(number("kept_bytes").value_or(0));
    stages[stage].workingSetBytes = stagePeak;
    stages[stage].gatheredBytes = stagePeakGathered;
    stagePeak = 0;
    stagePeakGathered = 0;
    return success();
  }

  /// The pipeline section's figures: the stages' layers, and the uniform
  /// split priced with the same per-op costs.
  PipelineFigures pipelineFigures() const {
    PipelineFigures figures = schedule;
    figures.stages = stages;
    figures.transfers = transfers;
    figures.layers = layerAttention.size();
    if (training)
      for (auto &[position, attention] : attentions) {
        StageReport &stage = figures.stages[attentionStage.lookup(attention)];
        stage.korthikantiBytes += korthikantiBytes(attention, stage.recomputed);
      }
    std::vector<OpCost> costs;
    for (const PricedOp &op : priced) {
      std::optional<unsigned> layer = layerOfOp(op);
      if (layer && !op.backward)
        figures.stages[op.stage].layers.insert(*layer);
      costs.push_back({op.seconds, layer});
    }
    figures.uniformSeconds = uniformStageSeconds(costs, figures.layers, stages.size());
    // A training step's time is its schedule's F, B, W and updates.
    if (std::optional<PipelineFigures::Simulated> simulated = figures.simulate())
      figures.stepSeconds = simulated->stepSeconds;
    return figures;
  }

  /// An op's layer: by its module, or without module paths the layer of
  /// the last attention op at or before it.
  std::optional<unsigned> layerOfOp(const PricedOp &op) const {
    if (!layers.empty())
      return layers.layerOf(op.module);
    auto next = llvm::find_if(attentions, [&](auto &anchor) { return anchor.first > op.position; });
    if (next == attentions.begin())
      return std::nullopt;
    return unsigned(next - attentions.begin()) - 1;
  }

  int64_t localBytes(Value value) const {
    auto found = sharding.find(value);
    ValueSharding of = found != sharding.end()
                           ? found->second
                           : ValueSharding::replicated(tensorType(value).getRank());
    return tensorBytes(of.localShape(tensorType(value).getShape(), mesh),
                       tensorType(value).getElementType());
  }

  /// Activation memory: a value lives from its op to its last use. A
  /// weight's gradient is counted in grad_bytes instead, as if it had
  /// storage of its own for the whole step.
  void live(Value value, Operation &op) {
    if (training && isWeightGradient(value))
      gradients.insert(value);
    else if (isGatheredWeight(value))
      gatheredLive += localBytes(value);
    else
      liveBytes += localBytes(value);
    peakActivation = std::max(peakActivation, liveBytes);
    stagePeak = std::max(stagePeak, liveBytes);
    peakGathered = std::max(peakGathered, gatheredLive);
    stagePeakGathered = std::max(stagePeakGathered, gatheredLive);
    release(op);
  }

  /// ZeRO-3's weight as a step part gathers it from its dp-split storage.
  bool isGatheredWeight(Value value) const {
    auto reshard = value.getDefiningOp<dist::ReshardOp>();
    if (zeroStage != 3 || !reshard)
      return false;
    auto weight = throughReshards(reshard.getInput()).getDefiningOp<graph::WeightOp>();
    return weight && graph::holdsWeight(graph::trainRole(weight));
  }

  /// Frees the operands `op` uses last.
  void release(Operation &op) {
    for (Value operand : op.getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || isa<graph::WeightOp, graph::ConstantOp>(producer) ||
          gradients.contains(operand))
        continue;
      bool lastUse = llvm::all_of(operand.getUsers(), [&](Operation *user) {
        return user == &op || user->isBeforeInBlock(&op);
      });
      if (lastUse && released.insert(operand).second)
        (isGatheredWeight(operand) ? gatheredLive : liveBytes) -= localBytes(operand);
    }
  }

  /// What `value` is before any reshard.
  static Value throughReshards(Value value) {
    while (auto reshard = value.getDefiningOp<dist::ReshardOp>())
      value = reshard.getInput();
    return value;
  }

  /// The parts of the step of the ops that read `value`, through reshards;
  /// the values the step returns are read by no part.
  static void readersParts(Value value, SmallVectorImpl<graph::Phase> &parts) {
    for (Operation *user : value.getUsers()) {
      if (auto reshard = dyn_cast<dist::ReshardOp>(user))
        readersParts(reshard.getResult(), parts);
      else if (!isa<func::ReturnOp>(user))
        if (std::optional<graph::Phase> part = graph::phaseOf(user))
          parts.push_back(*part);
    }
  }

  /// A weight's gradient: a backward value the optimizer reads (before or
  /// after the reshard that sums it over dp).
  static bool isWeightGradient(Value value) {
    Operation *producer = throughReshards(value).getDefiningOp();
    if (!producer || isa<graph::WeightOp, graph::ConstantOp>(producer) ||
        graph::phaseOf(producer) != graph::Phase::Backward)
      return false;
    SmallVector<graph::Phase> parts;
    readersParts(value, parts);
    return llvm::is_contained(parts, graph::Phase::Optimizer);
  }

  /// Whether `op` is inference's, or a training step's forward.
  bool isForward(Operation *op) const {
    return !training || graph::phaseOf(op).value_or(graph::Phase::Forward) == graph::Phase::Forward;
  }

  /// The part of the step a reshard's collectives belong to: that of the
  /// first op that waits for them ("forward", "backward", "optimizer"),
  /// except that moving a weight's gradient to the optimizer (its sum over
  /// dp) is "grad_sync". A value only returned belongs to its producer.
  std::string collectivePart(dist::ReshardOp reshard) const {
    SmallVector<graph::Phase> parts;
    readersParts(reshard.getResult(), parts);
    if (parts.empty())
      return partOf(throughReshards(reshard.getInput()).getDefiningOp());
    graph::Phase first = *llvm::min_element(parts);
    if (first == graph::Phase::Optimizer && isWeightGradient(reshard.getResult()))
      return "grad_sync";
    return graph::phaseName(first).str();
  }

  /// How often a step runs what belongs to `part`: the forward and
  /// backward once per micro-batch, the rest once.
  int64_t runsPerStep(StringRef part) const {
    return part == "forward" || part == "backward" ? loopRuns : 1;
  }

  /// An op's part of a training step ("" outside one; ops before any
  /// tagged op, such as weights, are forward).
  std::string partOf(Operation *op) const {
    if (!training)
      return "";
    std::optional<graph::Phase> part = op ? graph::phaseOf(op) : std::nullopt;
    return graph::phaseName(part.value_or(graph::Phase::Forward)).str();
  }

  /// The model's layers are its repeated modules when the exporter named
  /// them; otherwise layer k runs from attention k to attention k+1, the
  /// last taking as many collectives as the one before it.
  void assignLayers() {
    layers = ModelLayers::fromModules(modules);
    if (!layers.empty()) {
      layerAttention.assign(layers.size(), nullptr);
      for (auto &[position, attention] : attentions)
        if (std::optional<unsigned> layer =
                layers.layerOf(graph::onnxModuleOf(attention->getLoc())))
          if (!layerAttention[*layer])
            layerAttention[*layer] = attention;
      for (Collective &collective : collectives)
        collective.layer = layers.layerOf(collective.module);
      return;
    }
    for (auto &[position, attention] : attentions)
      layerAttention.push_back(attention);
    if (attentions.empty())
      return;
    size_t perLayer = 0;
    for (Collective &collective : collectives) {
      auto next = llvm::find_if(attentions,
                                [&](auto &anchor) { return anchor.first > collective.position; });
      if (next == attentions.begin())
        continue;
      unsigned layer = unsigned(next - attentions.begin()) - 1;
      if (layer + 1 < attentions.size()) {
        collective.layer = layer;
        if (layer == 0)
          ++perLayer;
        continue;
      }
      size_t taken = llvm::count_if(collectives,
                                    [&](const Collective &other) { return other.layer == layer; });
      if (attentions.size() == 1 || taken < perLayer)
        collective.layer = layer;
    }
  }

  /// The runtime's gather of a returned value onto the output rank, priced
  /// as the all-gather whose bytes the output rank receives, once per
  /// micro-batch.
  void noteResultGather(dist::ReshardOp reshard, const RuntimeGather &gather, int64_t width) {
    CollectiveStep step{CollectiveKind::AllGather, gather.axes,      gather.dim, 0,
                        gather.pieceShape,         gather.pieceShape};
    step.outputShape[size_t(gather.dim)] *= mesh.groupSize(gather.axes);
    std::string output;
    for (OpOperand &use : reshard->getUses())
      if (auto name = use.getOwner()->getParentOfType<func::FuncOp>().getResultAttrOfType<StringAttr>(
              use.getOperandNumber(), graph::kNameAttrName))
        output = name.getValue().str();
    std::vector<std::string> axes;
    for (unsigned axis : gather.axes)
      axes.push_back(mesh.names[axis]);
    int64_t times = pipeline ? schedule.microbatches : 1;
    resultGathers.push_back({std::move(output), std::move(axes), gather.dim,
                             times * collectiveTrafficBytes(step, width, mesh),
                             double(times) * collectiveSeconds(step, width, mesh, device)});
  }

  /// The layer's module path, or "" for layers found by attention ops.
  std::string layerName(unsigned layer) const {
    return layers.empty() ? std::string() : layers.name(layer);
  }

  /// The elements of `value` as one tp group holds it: its local elements,
  /// times its split over tp (of an attention's output, b*s*h with b one
  /// data-parallel replica's micro-batch).
  double tensorGroupElements(Value value) const {
    double elements = double(localBytes(value)) /
                      double(graph::elementByteWidth(tensorType(value).getElementType()));
    if (std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis))
      if (sharding.find(value)->second.splitsOver(*tp))
        elements *= double(mesh.sizes[*tp]);
    return elements;
  }

  /// Korthikanti et al. (2022)'s activation bytes of one layer and
  /// micro-batch per device, in 16-bit activations: sbh(10 + 24/t) with
  /// tensor parallelism and selective recompute, 34sbh/t with sequence
  /// parallelism too, 2sbh (2sbh/t with sp) with full recompute; scaled to
  /// the width of the layer's activations.
  double korthikantiBytes(Operation *attention, bool recomputed) const {
    Value output = attention->getResult(0);
    std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
    double t = tp ? double(mesh.sizes[*tp]) : 1;
    double sbh = tensorGroupElements(output);
    double perLayer = recomputed          ? 2 * sbh / (sequenceParallel ? t : 1)
                      : sequenceParallel ? 34 * sbh / t
                                         : sbh * (10 + 24 / t);
    return perLayer * double(graph::elementByteWidth(tensorType(output).getElementType())) / 2;
  }

  /// Megatron-LM's forward traffic per device for one layer: 2 all-reduces
  /// of b*s*h, b the batch of one data-parallel replica.
  std::optional<double> megatronTraffic(unsigned layer) const {
    std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
    if (!tp || !layerAttention[layer])
      return std::nullopt;
    // b*s*h as one tp group holds it: the attention output's local
    // elements, times its split over tp (data parallelism divides b, when
    // the batch could be split).
    Value output = layerAttention[layer]->getResult(0);
    double t = double(mesh.sizes[*tp]);
    double bsh = tensorGroupElements(output);
    // Two all-reduces of b*s*h forward; a training step adds two backward,
    // once per micro-batch (b is one micro-batch's).
    double allReduces = training ? 4 : 2;
    return double(loopRuns) * allReduces * 2 * (t - 1) / t * bsh *
           double(graph::elementByteWidth(tensorType(output).getElementType()));
  }

  /// The layer's tp traffic per device; with `part`, of that part of a
  /// training step alone.
  double layerTraffic(unsigned layer, std::map<std::string, int> *kinds = nullptr,
                      StringRef part = "") const {
    double traffic = 0;
    std::optional<unsigned> tp = mesh.axis(rt::kTensorAxis);
    for (const Collective &collective : collectives) {
      if (collective.layer != layer || !tp || !collective.overTensorAxis ||
          (!part.empty() && collective.phase != part))
        continue;
      traffic += double(collective.traffic);
      if (kinds)
        ++(*kinds)[collective.kind];
    }
    return traffic;
  }

  SmallVector<func::FuncOp> functions;
  MeshShape mesh;
  dist::PipelineOp pipeline; ///< null for one program
  PipelineFigures schedule;  ///< the pipeline's attributes, read once
  const DeviceModel &device;
  size_t stage = 0; ///< the function being walked
  std::vector<StageReport> stages;
  std::vector<TransferReport> transfers;
  std::vector<PricedOp> priced;
  llvm::DenseMap<int64_t, size_t> sendOf; ///< transfer -> its send in collectives
  llvm::DenseMap<Value, ValueSharding> sharding;
  llvm::DenseSet<Value> released;
  std::vector<Collective> collectives;
  /// What the runtime gathers onto the output rank after the step.
  struct ResultGather {
    std::string output;
    std::vector<std::string> axes;
    int64_t dim;
    int64_t bytes; ///< received by the output rank
    double seconds;
  };
  std::vector<ResultGather> resultGathers;
  /// One entry per graph.moe (routed experts), in program order.
  llvm::json::Array experts;
  std::vector<std::pair<size_t, Operation *>> attentions;
  llvm::DenseMap<Operation *, size_t> attentionStage;
  /// Some norm reads the stream split over tp (--sp).
  bool sequenceParallel = false;
  std::vector<std::string> modules; ///< of every op, for the layers
  ModelLayers layers;
  /// Each layer's first attention op (b*s*h for Megatron's traffic); null
  /// in a layer without one.
  std::vector<Operation *> layerAttention;
  int64_t paramBytes = 0, liveBytes = 0, peakActivation = 0, stagePeak = 0;
  /// ZeRO-3's gathered weights live now, and their peaks.
  int64_t gatheredLive = 0, peakGathered = 0, stagePeakGathered = 0;
  /// A training step's gradients and optimizer states per rank (no
  /// pipelines: every rank holds the same amounts).
  bool training;
  /// The micro-batches a training step runs its loop for (1: none).
  int64_t loopRuns = 1;
  int64_t gradBytes = 0, optimizerBytes = 0;
  /// Values that are a weight's gradient, which `live` leaves out.
  llvm::DenseSet<Value> gradients;
  /// A training step's compute time by part of the step.
  std::map<std::string, double> partComputeSeconds;
  double flops = 0, computeSeconds = 0;
  /// noteForwardFlops': all, and those computed in 16 bits.
  double forwardFlops = 0, forwardFlops16 = 0;
};

llvm::json::Value ReportBuilder::json() const {
  MeshShape devices = deviceMesh();
  llvm::json::Object axes;
  for (auto [name, size] : llvm::zip(devices.names, devices.sizes))
    axes[name] = size;
  llvm::json::Array list;
  int64_t commBytes = 0, trafficBytes = 0;
  double commSeconds = 0;
  for (const Collective &collective : collectives) {
    commBytes += collective.bytes;
    trafficBytes += collective.traffic;
    commSeconds += collective.seconds;
    llvm::json::Array axisList;
    for (const std::string &axis : collective.axes)
      axisList.push_back(axis);
    llvm::json::Object entry{{"kind", collective.kind},       {"axes", std::move(axisList)},
                             {"bytes", collective.bytes},     {"traffic_bytes", collective.traffic},
                             {"seconds", collective.seconds}, {"source", collective.source}};
    if (!collective.module.empty())
      entry["module"] = collective.module;
    if (collective.layer)
      entry["layer"] = int64_t(*collective.layer);
    if (!collective.phase.empty())
      entry["phase"] = collective.phase;
    list.push_back(std::move(entry));
  }
  llvm::json::Array ranks;
  for (int64_t rank = 0; rank < devices.devices(); ++rank) {
    RankMemory memory = rankMemory(rank);
    llvm::json::Object entry{{"rank", rank},
                             {"param_bytes", memory.paramBytes},
                             {"peak_activation_bytes", memory.activationBytes}};
    if (training) {
      entry["grad_bytes"] = memory.gradBytes;
      entry["optimizer_bytes"] = memory.optimizerBytes;
      if (zeroStage == 3)
        entry["gathered_param_bytes"] = memory.gatheredBytes;
      entry["total_bytes"] = memory.total();
    }
    if (pipeline)
      entry["pp_rank"] = rank / stageRanks();
    ranks.push_back(std::move(entry));
  }
  llvm::json::Array layers;
  for (unsigned layer = 0; layer < layerAttention.size(); ++layer) {
    std::map<std::string, int> kinds;
    double traffic = layerTraffic(layer, &kinds);
    llvm::json::Object counts;
    for (auto &[kind, count] : kinds)
      counts[kind] = count;
    llvm::json::Object entry{{"layer", int64_t(layer)},
                             {"tp_collectives", std::move(counts)},
                             {"tp_traffic_bytes", traffic}};
    if (std::string name = layerName(layer); !name.empty())
      entry["module"] = name;
    if (auto megatron = megatronTraffic(layer)) {
      entry["megatron_traffic_bytes"] = *megatron;
      entry["ratio"] = *megatron > 0 ? traffic / *megatron : 0.0;
    }
    if (training)
      entry["tp_phases"] = layerPartsJson(layer);
    layers.push_back(std::move(entry));
  }
  llvm::json::Array gathers;
  double gatherSeconds = 0;
  for (const ResultGather &gather : resultGathers) {
    gatherSeconds += gather.seconds;
    llvm::json::Array axisList;
    for (const std::string &axis : gather.axes)
      axisList.push_back(axis);
    gathers.push_back(llvm::json::Object{{"output", gather.output},
                                         {"axes", std::move(axisList)},
                                         {"dim", gather.dim},
                                         {"bytes", gather.bytes},
                                         {"seconds", gather.seconds}});
  }
  // A pipeline's step is the schedule's, not one device's sum of parts;
  // the runtime's result gathers follow it.
  double step =
      (pipeline ? pipelineFigures().stepSeconds : computeSeconds + commSeconds) + gatherSeconds;
  StepBreakdown parts = stepBreakdown(step, gatherSeconds);
  llvm::json::Object totals{{"flops", flops},
                            {"comm_bytes", commBytes},
                            {"traffic_bytes", trafficBytes},
                            {"compute_seconds", computeSeconds},
                            {"comm_seconds", commSeconds},
                            {"result_gather_seconds", gatherSeconds},
                            {"est_step_seconds", step},
                            {"breakdown", parts.json(training, bool(pipeline))}};
  addThroughput(totals, step, devices.devices());
  llvm::json::Object report{{"device", device.name},
                            {"mesh", llvm::json::Object{{"axes", std::move(axes)}}},
                            {"collectives", std::move(list)},
                            {"result_gathers", std::move(gathers)},
                            {"ranks", std::move(ranks)},
                            {"layers", std::move(layers)},
                            {"totals", std::move(totals)}};
  if (pipeline)
    report["pipeline"] = pipelineJson(pipelineFigures());
  if (training)
    report["training"] = trainingJson();
  if (!experts.empty())
    report["moe"] = llvm::json::Array(experts);
  return report;
}

StepBreakdown ReportBuilder::stepBreakdown(double step, double gatherSeconds) const {
  StepBreakdown parts;
  parts.resultGathers = gatherSeconds;
  if (pipeline) {
    PipelineFigures figures = pipelineFigures();
    if (std::optional<StepBreakdown> simulated = figures.breakdown()) {
      simulated->resultGathers = gatherSeconds;
      return *simulated;
    }
    // The stage search's step: each pp rank runs its V stages for every
    // micro-batch at the slowest stage's pace, and waits the rest.
    double pace = 0;
    for (const StageReport &stage : figures.stages)
      pace = std::max({pace, stage.seconds, stage.sendSeconds});
    double stagesPerRank = figures.interleaved() ? double(figures.virtualStages) : 1;
    parts.stages = stagesPerRank * double(figures.microbatches) * pace;
    parts.bubble = step - gatherSeconds - parts.stages;
    return parts;
  }
  for (const auto &[part, seconds] : partComputeSeconds)
    (part == "optimizer" ? parts.optimizer : parts.compute) += seconds;
  if (!training)
    parts.compute = computeSeconds;
  for (const Collective &collective : collectives)
    parts.communication[collective.kind] += collective.seconds;
  return parts;
}

void ReportBuilder::addThroughput(llvm::json::Object &totals, double step,
                                  int64_t devices) const {
  // A training step's backward costs twice its forward (the convention
  // of Narayanan et al. and PaLM); --recompute runs a stage's forward
  // once more, which the hardware computes but the model does not need.
  double modelFlops = (training ? 3 : 1) * forwardFlops, hardwareFlops = modelFlops;
  if (pipeline)
    for (const StageReport &stage : pipelineFigures().stages)
      hardwareFlops += stage.recomputed ? stage.forwardFlops : 0;
  double peak = forwardFlops16 * 2 > forwardFlops ? device.peakFlops16 : device.peakFlops32;
  totals["model_flops"] = modelFlops;
  totals["hardware_flops"] = hardwareFlops;
  if (step <= 0)
    return;
  totals["est_tflops_per_device"] = hardwareFlops / (step * double(devices)) / 1e12;
  totals["est_mfu"] = modelFlops / (step * double(devices) * peak);
}

ReportBuilder::PartFigures ReportBuilder::partFigures(StringRef part) const {
  PartFigures figures;
  if (auto found = partComputeSeconds.find(part.str()); found != partComputeSeconds.end())
    figures.computeSeconds = found->second;
  for (const Collective &collective : collectives) {
    if (collective.phase != part)
      continue;
    figures.commSeconds += collective.seconds;
    figures.commBytes += collective.bytes;
    figures.trafficBytes += collective.traffic;
    ++figures.kinds[collective.kind];
  }
  return figures;
}

/// Whether `collective` runs over the data-parallel ranks (dp or HSDP's
/// replicas).
static bool overDataReplicas(const Collective &collective) {
  return llvm::any_of(collective.axes,
                      [](const std::string &axis) { return rt::holdsDataReplicas(axis); });
}

std::optional<ReportBuilder::DpVolume> ReportBuilder::gradSync() const {
  std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
  if (!dp || mesh.sizes[*dp] < 2)
    return std::nullopt;
  DpVolume sync{mesh.dataParallelRanks(), mesh.sizes[*dp], 0, 0};
  for (const Collective &collective : collectives)
    if (collective.phase == "grad_sync" && overDataReplicas(collective))
      sync.trafficBytes += collective.traffic;
  double d = double(sync.dp);
  if (zeroStage < 2) {
    sync.analyticBytes = 2 * double(gradBytes) * (d - 1) / d;
    return sync;
  }
  // From ZeRO stage 2 each rank keeps 1/g of the gradients: a
  // reduce-scatter of the whole in its group moves half an all-reduce's
  // bytes, and the groups' copies of each slice are all-reduced.
  double g = double(sync.group), r = d / g;
  double whole = double(gradBytes) * g;
  sync.analyticBytes = whole * (g - 1) / g + 2 * double(gradBytes) * (r - 1) / r;
  return sync;
}

std::optional<ReportBuilder::DpVolume> ReportBuilder::weightGathers() const {
  std::optional<unsigned> dp = mesh.axis(rt::kDataAxis);
  if (zeroStage == 0 || !dp || mesh.sizes[*dp] < 2)
    return std::nullopt;
  DpVolume gathers{mesh.dataParallelRanks(), mesh.sizes[*dp], 0, 0};
  for (const Collective &collective : collectives)
    if (collective.kind == "all_gather" && collective.phase != "grad_sync" &&
        overDataReplicas(collective))
      gathers.trafficBytes += collective.traffic;
  // Each ZeRO group gathers its slices: the new weights once after the
  // update, or at stage 3 the stored slices for the forward and again for
  // the backward (which reads fewer: no biases, no first layer's input
  // gradient).
  double g = double(gathers.group);
  double whole = zeroStage == 3 ? 2 * double(paramBytes) * g : double(paramBytes);
  gathers.analyticBytes = whole * (g - 1) / g;
  return gathers;
}

llvm::json::Value ReportBuilder::trainingJson() const {
  llvm::json::Object parts;
  for (const char *part : kParts) {
    PartFigures figures = partFigures(part);
    llvm::json::Object kinds;
    for (auto &[kind, count] : figures.kinds)
      kinds[kind] = count;
    parts[part] = llvm::json::Object{{"compute_seconds", figures.computeSeconds},
                                     {"comm_seconds", figures.commSeconds},
                                     {"collectives", std::move(kinds)},
                                     {"comm_bytes", figures.commBytes},
                                     {"traffic_bytes", figures.trafficBytes}};
  }
  llvm::json::Object section{{"phases", std::move(parts)}, {"zero_stage", zeroStage}};
  if (std::optional<DpVolume> gathers = weightGathers())
    section["weight_gathers"] =
        llvm::json::Object{{"dp", gathers->dp},
                           {"zero_group", gathers->group},
                           {"traffic_bytes", gathers->trafficBytes},
                           {"analytic_traffic_bytes", gathers->analyticBytes}};
  if (std::optional<DpVolume> sync = gradSync()) {
    llvm::json::Object entry{{"dp", sync->dp},
                             {"traffic_bytes", sync->trafficBytes},
                             {"analytic_traffic_bytes", sync->analyticBytes}};
    if (zeroStage > 0)
      entry["zero_group"] = sync->group;
    section["grad_sync"] = std::move(entry);
  }
  return section;
}

llvm::json::Value ReportBuilder::layerPartsJson(unsigned layer) const {
  llvm::json::Object parts;
  std::optional<double> megatron = megatronTraffic(layer);
  for (StringRef part : {"forward", "backward"}) {
    std::map<std::string, int> kinds;
    double traffic = layerTraffic(layer, &kinds, part);
    llvm::json::Object counts;
    for (auto &[kind, count] : kinds)
      counts[kind] = count;
    llvm::json::Object entry{{"tp_collectives", std::move(counts)}, {"tp_traffic_bytes", traffic}};
    // Megatron-LM: two all-reduces of b*s*h in each direction.
    if (megatron)
      entry["megatron_traffic_bytes"] = *megatron / 2;
    parts[part] = std::move(entry);
  }
  return parts;
}

ReportBuilder::RankMemory ReportBuilder::rankMemory(int64_t rank) const {
  if (!pipeline)
    return {paramBytes, peakActivation, gradBytes, optimizerBytes, peakGathered};
  // A pp rank holds stages p, p+P, ...: their weights, gradients, optimizer
  // states and in-flight activations all at once.
  RankMemory memory;
  for (size_t index = size_t(rank / stageRanks()); index < stages.size();
       index += size_t(schedule.pipelineRanks)) {
    memory.paramBytes += stages[index].paramBytes;
    memory.activationBytes += stages[index].activationBytes;
    memory.gradBytes += stages[index].gradBytes;
    memory.optimizerBytes += stages[index].optimizerBytes;
    memory.gatheredBytes += stages[index].gatheredBytes;
  }
  return memory;
}

std::string ReportBuilder::summary(bool priced) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  MeshShape devices = deviceMesh();
  RankMemory largest;
  for (int64_t rank = 0; rank < devices.devices(); rank += stageRanks())
    if (RankMemory memory = rankMemory(rank); memory.total() > largest.total())
      largest = memory;
  os << "plan on " << (devices.numAxes() ? devices.describe() : "one device") << " ("
     << (priced ? device.name : "cpu") << ")" << (zeroStage ? ", ZeRO stage " : "");
  if (zeroStage)
    os << zeroStage;
  os << ": " << collectives.size() << " collectives per " << (pipeline ? "micro-batch" : "step")
     << "; per device " << (pipeline ? "(the fullest) " : "")
     << formatBytes(double(largest.paramBytes)) << " weights, ";
  if (training)
    os << formatBytes(double(largest.gradBytes)) << " gradients, "
       << formatBytes(double(largest.optimizerBytes)) << " optimizer state, ";
  if (zeroStage == 3)
    os << formatBytes(double(largest.gatheredBytes)) << " weights gathered in flight, ";
  os << formatBytes(double(largest.activationBytes)) << " peak activations; "
     << llvm::formatv("{0:E2}", flops) << " flop\n";
  for (unsigned layer = 0; layer < layerAttention.size(); ++layer) {
    std::map<std::string, int> kinds;
    double traffic = layerTraffic(layer, &kinds);
    os << "  layer " << layer;
    if (std::string name = layerName(layer); !name.empty())
      os << " (" << name << ")";
    os << ":";
    for (auto &[kind, count] : kinds)
      os << " " << count << " " << kind;
    os << ", tp traffic " << formatBytes(traffic);
    if (auto megatron = megatronTraffic(layer))
      os << " (Megatron " << formatBytes(*megatron) << ", ratio "
         << llvm::formatv("{0:F2}", *megatron > 0 ? traffic / *megatron : 0.0) << ")";
    os << "\n";
  }
  size_t outside = llvm::count_if(collectives, [](const Collective &c) { return !c.layer; });
  if (outside)
    os << "  outside layers: " << outside << " collectives\n";
  if (training) {
    for (const char *part : kParts) {
      PartFigures figures = partFigures(part);
      int count = 0;
      for (auto &[kind, number] : figures.kinds)
        count += number;
      os << "  " << part << ": " << count << " collectives, "
         << formatBytes(double(figures.trafficBytes)) << " traffic";
      if (priced)
        os << ", " << formatSeconds(figures.computeSeconds) << " compute + "
           << formatSeconds(figures.commSeconds) << " communication";
      os << "\n";
    }
    if (std::optional<DpVolume> sync = gradSync()) {
      bool hybrid = sync->group < sync->dp;
      os << "  gradient sums over dp=" << sync->dp;
      if (hybrid)
        os << " in ZeRO groups of " << sync->group;
      os << ": " << formatBytes(double(sync->trafficBytes))
         << (zeroStage < 2 ? " per device (all-reduce of every gradient, 2(d-1)/d: "
             : hybrid
                 ? " per device (reduce-scatter in each group and all-reduce of the slices "
                   "across groups, (g-1)/g + 2(r-1)/(rg): "
                 : " per device (reduce-scatter of every gradient, (d-1)/d: ")
         << formatBytes(sync->analyticBytes) << ")\n";
    }
    if (std::optional<DpVolume> gathers = weightGathers())
      os << "  weight gathers over dp=" << gathers->group << ": "
         << formatBytes(double(gathers->trafficBytes))
         << (zeroStage == 3 ? " per device (all-gather of every weight for the forward and the "
                              "backward, 2(d-1)/d: "
                            : " per device (all-gather of every weight, (d-1)/d: ")
         << formatBytes(gathers->analyticBytes) << ")\n";
  }
  double commSeconds = 0;
  for (const Collective &collective : collectives)
    commSeconds += collective.seconds;
  if (priced)
    os << "  estimated " << (pipeline ? "micro-batch over all stages" : "step") << ": "
       << formatSeconds(computeSeconds) << " compute + " << formatSeconds(commSeconds)
       << " communication\n";
  else
    os << "  estimated step: not priced for the CPU (shardc-calibrate writes a --device file that "
          "prices it)\n";
  if (pipeline)
    printPipelineSummary(pipelineFigures(), priced, os);
  return text;
}

} // namespace

FailureOr<Report> buildReport(ModuleOp module, const DeviceModel &device, bool priced) {
  FailureOr<dist::MeshOp> mesh = findMesh(module);
  if (failed(mesh))
    return failure();
  auto pipelines = llvm::to_vector(module.getOps<dist::PipelineOp>());
  dist::PipelineOp pipeline = pipelines.empty() ? dist::PipelineOp() : pipelines.front();
  FailureOr<SmallVector<func::FuncOp>> functions = programFunctions(module, pipeline);
  if (failed(functions))
    return failure();
  ReportBuilder builder(*functions, *mesh, pipeline, device,
                        module->hasAttr(graph::kTrainingAttrName));
  if (auto stage = module->getAttrOfType<IntegerAttr>(graph::kZeroStageAttrName))
    builder.zeroStage = stage.getInt();
  if (failed(builder.run()))
    return failure();
  return Report{builder.json(), builder.summary(priced)};
}

} // namespace shardc::report
