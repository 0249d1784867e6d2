//===- Compile.cpp - what shardc does, callable without its command line --===//
//
// Order matters for the user: every flag and output path is checked before
// anything is compiled (a refused one costs nothing), outputs are written
// only once every phase succeeded, and warnings come after the outputs so
// that a failure stays one line.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Compile.h"

#include "runtime/core/MeshAxes.h"

#include "compiler/Artifact/ArtifactDirectory.h"
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/InputModule.h"
#include "compiler/Driver/Options.h"
#include "compiler/Driver/OutputFiles.h"
#include "compiler/Driver/Pipeline.h"
#include "compiler/Driver/PipelineOptions.h"
#include "compiler/Driver/TrainingOptions.h"
#include "compiler/Report/ReportWriter.h"
#include "passes/Registration.h"
#include "passes/Sharding/CostModel.h"
#include "passes/Sharding/ShardingConversion.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>

using namespace mlir;

namespace shardc::driver {
namespace {

constexpr const char *kSpNeedsTp = "--sp splits activations over tp; give --tp N with N > 1";

/// Everything compile() needs from the options, checked.
struct CheckedOptions {
  Phase phase;
  std::string arch;
  PipelineSettings settings;
  import::ImportOptions import;
  /// The devices, with pp when there is a pipeline.
  sharding::MeshShape mesh;
  std::optional<PipelineSpec> pipeline;
};

/// Checks every flag and output path; the first error is printed.
std::optional<CheckedOptions> checkOptions(const CompileOptions &options, StringRef tool) {
  auto fail = [&](const Twine &message) -> std::optional<CheckedOptions> {
    printError(tool, message);
    return std::nullopt;
  };
  auto failWith = [&](llvm::Error error, StringRef prefix = "") {
    return fail(prefix + llvm::toString(std::move(error)));
  };
  CheckedOptions checked;
  std::optional<Phase> phase = parsePhase(options.emit);
  if (!phase)
    return fail("--emit '" + options.emit + "': expected one of " + phaseNames());
  checked.phase = *phase;
  const std::string &target = options.target;
  if (target != "cpu" && target != "cuda")
    return fail("--target '" + target + "': expected cpu or cuda");
  static const char *const archs[] = {"sm_80", "sm_89", "sm_90", "sm_90a"};
  if (!options.cudaArch.empty() && target != "cuda")
    return fail("--cuda-arch '" + options.cudaArch + "' needs --target=cuda");
  checked.arch = options.cudaArch.empty() ? (target == "cuda" ? "sm_90" : "") : options.cudaArch;
  if (!checked.arch.empty() && !llvm::is_contained(archs, checked.arch))
    return fail("--cuda-arch '" + checked.arch + "': expected sm_80, sm_89, sm_90 or sm_90a");
  std::optional<std::string> storage = llvm::StringSwitch<std::optional<std::string>>(options.dtype)
                                           .Case("fp32", "")
                                           .Case("bf16", "bf16")
                                           .Case("fp16", "f16")
                                           .Default(std::nullopt);
  if (!storage)
    return fail("--dtype '" + options.dtype + "': expected fp32, bf16 or fp16");
  const std::string &output = options.outputPath;
  if (*phase == Phase::Artifact && (output.empty() || output == "-"))
    return fail("the artifact is a directory; give it with -o OUT/");
  if (*phase == Phase::Artifact)
    if (auto destination = artifact::checkArtifactDestination(output); !destination)
      return failWith(destination.takeError());
  if (!options.reportPath.empty())
    if (llvm::Error error = checkOutputFile(options.reportPath))
      return failWith(std::move(error), "--report ");
  if (isMlirInput(options.modelPath)) {
    // A module is past import: its shapes are static, its inputs fixed.
    if (!options.dims.empty() || !options.inputShapes.empty() || !options.constantInputs.empty())
      return fail(options.modelPath + ": --dim, --input-shape and --constant-input apply to "
                                      "ONNX models; an MLIR module's shapes are already static");
    if (*phase == Phase::Import)
      return fail(options.modelPath + ": an MLIR module is compiled from the graph phase on; "
                                      "--emit=import comes before it");
    for (const std::string &folder : options.weightsDirs)
      if (!llvm::sys::fs::is_directory(folder))
        return fail("--weights-dir '" + folder + "': not a folder");
  } else if (!options.weightsDirs.empty()) {
    return fail("--weights-dir applies to MLIR modules; an ONNX model's external data lies in "
                "its own folder");
  }
  auto importOptions =
      parseImportOptions(options.dims, options.inputShapes, options.constantInputs);
  if (!importOptions)
    return failWith(importOptions.takeError());
  checked.import = std::move(*importOptions);
  checked.import.training = options.train;
  MeshDegrees degrees;
  for (auto [flag, text, degree] :
       {std::tuple{rt::kPipelineAxis, &options.pipelineParallel, &degrees.pp},
        std::tuple{rt::kDataAxis, &options.dataParallel, &degrees.dp},
        std::tuple{rt::kExpertAxis, &options.expertParallel, &degrees.ep},
        std::tuple{rt::kTensorAxis, &options.tensorParallel, &degrees.tp}}) {
    auto parsed = parseDegree(flag, *text);
    if (!parsed)
      return failWith(parsed.takeError());
    *degree = *parsed;
  }
  auto mesh = parseMesh(options.mesh, degrees);
  if (!mesh)
    return failWith(mesh.takeError());
  checked.mesh = std::move(*mesh);
  auto pipeline = parsePipelineOptions(options, checked.mesh);
  if (!pipeline)
    return failWith(pipeline.takeError());
  checked.pipeline = std::move(*pipeline);
  if (llvm::Error error = checkRankCount(checked.mesh, options.maxRanks))
    return failWith(std::move(error));
  // An MLIR module may bring its own mesh: checked once it is read.
  if (options.sequenceParallel && !isMlirInput(options.modelPath) &&
      !checked.mesh.axis(rt::kTensorAxis))
    return fail(kSpNeedsTp);
  checked.settings = {*storage, target, options.sequenceParallel, options.device, 0, 0, {}};
  if (!options.deviceMemory.empty()) {
    auto bytes = parseByteSize("device-memory", options.deviceMemory);
    if (!bytes)
      return failWith(bytes.takeError());
    checked.settings.deviceMemory = *bytes;
  }
  if (!options.moeCapacityFactor.empty()) {
    double factor = 0;
    if (llvm::StringRef(options.moeCapacityFactor).getAsDouble(factor) || !(factor > 0) ||
        !std::isfinite(factor))
      return fail("--moe-capacity-factor '" + options.moeCapacityFactor +
                  "': expected a positive number (1.0: each expert keeps its average share of "
                  "the entries)");
    checked.settings.moeCapacityFactor = factor;
  }
  auto training = parseTrainingOptions(options);
  if (!training)
    return failWith(training.takeError());
  checked.settings.training = std::move(*training);
  if (checked.settings.training)
    checked.settings.training->pipelined = checked.pipeline.has_value();
  if (llvm::Error error = placeZeroOnMesh(options, checked.settings.training, checked.mesh))
    return failWith(std::move(error));
  return checked;
}

/// Gives `module` the mesh of the flags (and their pipeline); a module that
/// brings its own (an MLIR input) keeps it, and then the flags must not name
/// another. Returns the mesh the ops are sharded over.
FailureOr<sharding::MeshShape> placeOnMesh(ModuleOp module, const CheckedOptions &checked,
                                           StringRef modelPath, StringRef tool) {
  // A training step in micro-batches shards over them as a pipeline does
  // (the mb axis), without stages.
  const int64_t trainingMicrobatches =
      checked.settings.training ? checked.settings.training->microbatches : 1;
  sharding::MeshShape flags = checked.pipeline ? stageMesh(checked.mesh, *checked.pipeline)
                              : trainingMicrobatches > 1
                                  ? sharding::stagesOfDevices(checked.mesh, trainingMicrobatches)
                                  : checked.mesh;
  FailureOr<dist::MeshOp> own = sharding::findMesh(module);
  if (failed(own))
    return failure();
  if (*own) {
    if (checked.mesh.numAxes()) {
      printError(tool, modelPath + ": the module has its own dist.mesh; give no --tp, --dp, "
                                   "--pp or --mesh");
      return failure();
    }
    return sharding::meshShapeOf(*own);
  }
  if (flags.numAxes()) {
    module->getContext()->getOrLoadDialect<dist::DistDialect>();
    OpBuilder builder(module.getBodyRegion());
    builder.create<dist::MeshOp>(module.getLoc(), "mesh", ArrayRef<std::string>(flags.names),
                                 ArrayRef<int64_t>(flags.sizes));
  }
  llvm::Error placed = checked.pipeline ? placePipeline(module, *checked.pipeline, flags)
                       : trainingMicrobatches > 1
                           ? checkMicrobatchInputs(module, trainingMicrobatches, flags)
                           : llvm::Error::success();
  if (placed) {
    printError(tool, modelPath + ": " + llvm::toString(std::move(placed)));
    return failure();
  }
  return flags;
}

/// Writes `text` to `path` ('-': stdout) once the compilation succeeded.
bool writeFile(StringRef path, StringRef text, StringRef tool) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output) {
    printError(tool, path + ": " + error);
    return false;
  }
  output->os() << text;
  output->os().flush();
  // A full disk or `ulimit -f`: one line, and the partial file is removed
  // (not kept) instead of LLVM's fatal "IO failure on output stream".
  if (std::error_code error = output->os().error()) {
    printError(tool, path + ": write failed: " + error.message());
    output->os().clear_error();
    return false;
  }
  output->keep();
  return true;
}

} // namespace

int compile(const CompileOptions &options, const char *tool) {
  std::optional<CheckedOptions> checked = checkOptions(options, tool);
  if (!checked)
    return 1;
  Phase phase = checked->phase;
  const PipelineSettings &settings = checked->settings;
  auto device = sharding::DeviceModel::load(options.device);
  if (!device) {
    printError(tool, llvm::toString(device.takeError()));
    return 1;
  }

  DialectRegistry registry;
  registerShardcDialects(registry);
  MLIRContext context(registry);
  OneLineDiagnostics diagnostics(context, tool);

  FailureOr<OwningOpRef<ModuleOp>> input =
      loadInput(context, options.modelPath, checked->import,
                MlirInputRules{options.weightsDirs, options.maxRanks}, tool);
  if (failed(input))
    return 1;
  ModuleOp module = **input;
  std::optional<Phase> from = inputPhase(options.modelPath);
  FailureOr<sharding::MeshShape> mesh = placeOnMesh(module, *checked, options.modelPath, tool);
  if (failed(mesh))
    return 1;
  if (options.sequenceParallel && !mesh->axis(rt::kTensorAxis)) {
    printError(tool, kSpNeedsTp);
    return 1;
  }
  std::string batchWarning = batchSplitWarning(module, *mesh);

  // The report describes the sharded program: reached on the way to a later
  // phase, or on a copy when the output stops earlier.
  std::optional<report::Report> report;
  bool wantReport = !options.reportPath.empty() || options.verbose;
  auto makeReport = [&](ModuleOp sharded) {
    // The cost model prices GPUs: a CPU plan's summary prints no GPU's times
    // unless --device asks for them.
    bool priced = options.target == "cuda" || options.deviceGiven;
    auto built = report::buildReport(sharded, *device, priced);
    if (succeeded(built))
      report = std::move(*built);
    return succeeded(built);
  };
  if (wantReport && phase >= Phase::Sharded) {
    if (failed(runPipeline(module, from, Phase::Sharded, settings)) || !makeReport(module) ||
        failed(runPipeline(module, Phase::Sharded, phase, settings)))
      return 1;
  } else {
    if (failed(runPipeline(module, from, phase, settings)))
      return 1;
    if (wantReport) {
      OwningOpRef<ModuleOp> copy = module.clone();
      if (failed(runPipeline(*copy, phase, Phase::Sharded, settings)) || !makeReport(*copy))
        return 1;
    }
  }

  if (phase == Phase::Artifact) {
    artifact::ArtifactOptions artifactOptions{options.target, checked->arch, options.modelPath};
    if (failed(artifact::writeArtifact(module, options.outputPath, artifactOptions)))
      return 1;
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags());
    if (!writeFile(options.outputPath, text, tool))
      return 1;
  }
  if (report && !options.reportPath.empty())
    if (llvm::Error error = writeFileAtomically(
            options.reportPath, llvm::formatv("{0:2}", report->json).str() + "\n")) {
      printError(tool, "--report " + llvm::toString(std::move(error)));
      return 1;
    }
  if (report && options.verbose)
    diagnosticStream() << report->summary;
  if (!batchWarning.empty())
    diagnosticStream() << tool << ": warning: " << batchWarning << "\n";
  return 0;
}

} // namespace shardc::driver
