//===- PipelineOptions.cpp - --pp and its flags, checked and placed --------===//
#include "compiler/Driver/PipelineOptions.h"

#include "compiler/Driver/Compile.h"
#include "compiler/Driver/Options.h"
#include "dialects/Dist/DistDialect.h"
#include "dialects/Graph/GraphDialect.h"
#include "runtime/core/MeshAxes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace llvm;

namespace shardc::driver {
namespace {

Error pipelineError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The node names of a --pp-split value: cut at each comma but '\,', a
/// comma inside a name (ONNX names may hold one).
std::vector<std::string> splitNodeNames(StringRef value) {
  std::vector<std::string> names(1);
  for (size_t i = 0; i < value.size(); ++i) {
    if (value.substr(i).starts_with("\\,"))
      names.back() += value[++i];
    else if (value[i] == ',')
      names.emplace_back();
    else
      names.back() += value[i];
  }
  return names;
}

} // namespace

Expected<std::optional<PipelineSpec>> parsePipelineOptions(const CompileOptions &options,
                                                           const sharding::MeshShape &mesh) {
  auto microbatches = parseDegree("microbatches", options.microbatches, "pieces of the batch");
  if (!microbatches)
    return microbatches.takeError();
  auto virtualStages = parseDegree("virtual-stages", options.virtualStages, "stages per rank");
  if (!virtualStages)
    return virtualStages.takeError();
  // A training step's backward makes 1F1B the default: it keeps p
  // micro-batches' activations where fill-drain keeps all m.
  const std::string schedule =
      options.schedule.empty() ? (options.train ? "1f1b" : "gpipe") : options.schedule;
  const bool trainingSchedule =
      schedule == "1f1b" || schedule == "zb-h1" || schedule == "zb-h2";
  if (schedule != "gpipe" && schedule != "interleaved" && !trainingSchedule)
    return pipelineError("--schedule '" + schedule +
                         "': expected gpipe, interleaved, 1f1b, zb-h1 or zb-h2");
  if (trainingSchedule && !options.train)
    return pipelineError("--schedule " + schedule +
                         " orders a training step's backward passes; give --train, or gpipe or "
                         "interleaved for inference");
  // shardc never keeps the attention probabilities (attention's backward
  // recomputes them from q, k and v), so selective is the least recompute.
  const std::string recompute = options.recompute.empty() ? "selective" : options.recompute;
  if (recompute == "none")
    return pipelineError("--recompute none: attention's backward always recomputes the attention "
                         "core (selective, the default, is the least recompute)");
  if (recompute != "selective" && recompute != "full" && recompute != "auto")
    return pipelineError("--recompute '" + recompute + "': expected selective, full or auto");
  if (!options.recompute.empty() && !options.train)
    return pipelineError("--recompute chooses what a training step's backward computes again; "
                         "give --train");
  std::optional<unsigned> pp = mesh.axis(rt::kPipelineAxis);
  if (!pp) {
    if (recompute != "selective")
      return pipelineError("--recompute " + recompute +
                           " computes a pipeline stage's forward again in its backward; give "
                           "--pp N with N > 1");
    // A training step runs micro-batches without a pipeline: it sums their
    // gradients (TrainingOptions.cpp).
    if ((*microbatches > 1 && !options.train) || *virtualStages > 1 ||
        !options.schedule.empty() || !options.pipelineSplits.empty())
      return pipelineError("--microbatches, --schedule, --virtual-stages and --pp-split shape "
                           "a pipeline; give --pp N with N > 1");
    return std::nullopt;
  }
  PipelineSpec spec;
  spec.ranks = mesh.sizes[*pp];
  spec.microbatches = std::max<int64_t>(*microbatches, 1);
  spec.virtualStages = std::max<int64_t>(*virtualStages, 1);
  spec.schedule = schedule;
  spec.recompute = recompute;
  if (spec.schedule != "interleaved" && spec.virtualStages > 1)
    return pipelineError("--virtual-stages " + Twine(spec.virtualStages) +
                         " needs --schedule interleaved (" + spec.schedule +
                         " runs one stage per rank)");
  if (spec.schedule == "interleaved" && spec.virtualStages < 2)
    return pipelineError("--schedule interleaved gives each rank several stages; give "
                         "--virtual-stages V with V > 1");
  // Megatron-LM's interleaved 1F1B runs micro-batches in groups of P.
  if (options.train && spec.schedule == "interleaved" && spec.microbatches % spec.ranks != 0)
    return pipelineError("--schedule interleaved trains micro-batches in groups of the " +
                         Twine(spec.ranks) + " pipeline ranks (Megatron-LM's rule); --microbatches " +
                         Twine(spec.microbatches) + " is not a multiple of --pp " +
                         Twine(spec.ranks));
  for (const std::string &value : options.pipelineSplits)
    for (std::string &split : splitNodeNames(value)) {
      if (split.empty())
        return pipelineError("--pp-split: expected ONNX node names, one per cut (NODE,...)");
      if (llvm::is_contained(spec.splits, split))
        return pipelineError("--pp-split '" + split + "': each node named once");
      spec.splits.push_back(std::move(split));
    }
  int64_t stages = spec.ranks * spec.virtualStages;
  if (int64_t(spec.splits.size()) > stages - 1)
    return pipelineError("--pp-split names " + Twine(spec.splits.size()) + " cuts but " +
                         Twine(stages) + " stages have " + Twine(stages - 1));
  return spec;
}

sharding::MeshShape stageMesh(const sharding::MeshShape &devices, const PipelineSpec &spec) {
  return sharding::stagesOfDevices(devices, spec.microbatches);
}

Error checkMicrobatchInputs(mlir::ModuleOp module, int64_t microbatches,
                            const sharding::MeshShape &stages) {
  // Every batched input (dim 0 above 1, as the sharding search sees a batch)
  // must cut into M micro-batches of D equal data-parallel pieces.
  const int64_t dataRanks = stages.dataParallelRanks();
  int64_t pieces = microbatches * dataRanks;
  bool batched = false;
  for (auto function : module.getOps<mlir::func::FuncOp>())
    for (auto [index, type] : llvm::enumerate(function.getArgumentTypes())) {
      auto shaped = dyn_cast<mlir::ShapedType>(type);
      if (!shaped || !shaped.hasRank() || shaped.getRank() == 0 || shaped.getDimSize(0) <= 1)
        continue;
      batched = true;
      if (shaped.getDimSize(0) % pieces == 0)
        continue;
      auto name = function.getArgAttrOfType<mlir::StringAttr>(index, graph::kNameAttrName);
      return pipelineError("input '" + (name ? name.str() : "#" + std::to_string(index)) +
                           "' has a batch (dim 0) of " + Twine(shaped.getDimSize(0)) +
                           ", which does not cut into --microbatches " + Twine(microbatches) +
                           (dataRanks > 1 ? " x --dp " + Twine(dataRanks) : Twine()) +
                           " equal pieces");
    }
  if (microbatches > 1 && !batched)
    return pipelineError("--microbatches " + Twine(microbatches) +
                         " cuts the batch (dim 0 of the inputs), but no input has a batch "
                         "larger than 1");
  return Error::success();
}

Error placePipeline(mlir::ModuleOp module, const PipelineSpec &spec,
                    const sharding::MeshShape &stages) {
  if (Error error = checkMicrobatchInputs(module, spec.microbatches, stages))
    return error;
  module->getContext()->getOrLoadDialect<dist::DistDialect>();
  mlir::OpBuilder builder(module.getBodyRegion());
  SmallVector<StringRef> splits(spec.splits.begin(), spec.splits.end());
  builder.create<dist::PipelineOp>(module.getLoc(), spec.ranks, spec.virtualStages,
                                   spec.microbatches, spec.schedule,
                                   builder.getStrArrayAttr(splits), mlir::ArrayAttr(),
                                   spec.recompute);
  return Error::success();
}

} // namespace shardc::driver
