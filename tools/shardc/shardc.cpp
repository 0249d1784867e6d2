//===- shardc.cpp - the shardc compiler driver ----------------------------===//
//
//   shardc MODEL [-o OUT] [--emit=PHASE] [--dim NAME=N]... [--input-shape IN=D0xD1]...
//          [--tp N] [--dp N] [--sp] [--mesh AXIS=N,...] [--report FILE.json] [--verbose]
//
// Every error is one line on stderr and exit code 1; the output file is
// written only when the whole compilation succeeded.
//
//===----------------------------------------------------------------------===//
#include "compiler/Artifact/ArtifactDirectory.h"
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Driver/CommandLine.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Limits.h"
#include "compiler/Driver/Options.h"
#include "compiler/Driver/OutputFiles.h"
#include "compiler/Driver/Pipeline.h"
#include "compiler/Import/Importer.h"
#include "compiler/Report/ReportWriter.h"
#include "runtime/core/MeshAxes.h"
#include "tools/Version.h"

#include "dialects/Dist/DistDialect.h"
#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

#include <csignal>

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

namespace {

constexpr const char *kTool = "shardc";

cl::OptionCategory shardcCategory("shardc options");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx | model.onnxtext>"),
                               cl::cat(shardcCategory));
cl::opt<std::string> outputPath(
    "o",
    cl::desc("Where to write the result: the artifact directory, or for an MLIR --emit a "
             "file ('-' is stdout)"),
    cl::value_desc("path"), cl::init("-"), cl::cat(shardcCategory));
cl::opt<std::string> emitPhase(
    "emit",
    cl::desc("What to write: 'artifact' (default: the directory shardrun runs), or the MLIR "
             "after a phase: 'import' (imported and folded), 'graph' (also raised: linear, "
             "attention, norms, MLP, MoE), 'sharded' (every op's sharding chosen, reshards "
             "explicit), 'partitioned' (the per-device program with collectives) or 'exec' "
             "(lowered to kernel steps, fused, memory planned)"),
    cl::value_desc("phase"), cl::init("artifact"), cl::cat(shardcCategory));
cl::opt<std::string> target("target", cl::desc("The devices to compile for: 'cpu' or 'cuda'"),
                            cl::value_desc("name"), cl::init("cpu"), cl::cat(shardcCategory));
cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("With --target=cuda, the GPU architecture: sm_80, sm_89, sm_90 "
                      "(default) or sm_90a"),
             cl::value_desc("sm_XX"), cl::init(""), cl::cat(shardcCategory));
cl::opt<std::string>
    dtype("dtype",
          cl::desc("Storage type of float tensors: fp32 (default: as the model has them), bf16 or "
                   "fp16; weights are converted at compile time, kernels compute in fp32"),
          cl::value_desc("type"), cl::init("fp32"), cl::cat(shardcCategory));
cl::list<std::string>
    dimBindings("dim",
                cl::desc("Bind the symbolic dim NAME of the model's inputs to N (repeatable)"),
                cl::value_desc("NAME=N"), cl::cat(shardcCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Set the whole shape of an input, e.g. input_ids=2x16 ('scalar' for rank 0; "
             "repeatable)"),
    cl::value_desc("INPUT=D0xD1..."), cl::cat(shardcCategory));

cl::list<std::string> constantInputs(
    "constant-input",
    cl::desc("Fix an input's value at compile time: comma-separated values in its shape, or an "
             "ONNX TensorProto file (.pb); shapes computed from it fold (repeatable)"),
    cl::value_desc("INPUT=V0,V1,...|INPUT=FILE.pb"), cl::cat(shardcCategory));

cl::OptionCategory meshCategory("Sharding over many devices");
// Degrees are parsed by parseDegree, not llvm::cl: "0" and "1.5" are
// refused like "-3", in our words.
cl::opt<std::string> tensorParallel(
    llvm::StringRef(rt::kTensorAxis),
    cl::desc("Tensor-parallel degree: split every linear layer's weight over N devices"),
    cl::value_desc("N"), cl::cat(meshCategory));
cl::opt<std::string> dataParallel(llvm::StringRef(rt::kDataAxis),
                                  cl::desc("Data-parallel degree: split the batch over N devices"),
                                  cl::value_desc("N"), cl::cat(meshCategory));
cl::opt<bool> sequenceParallel(
    "sp",
    cl::desc("Sequence parallelism: keep the activations between blocks split along the sequence "
             "over tp (each all-reduce becomes a reduce-scatter plus an all-gather)"),
    cl::cat(meshCategory));
cl::opt<std::string>
    meshSpec("mesh",
             cl::desc("The device mesh by axes, e.g. dp=2,tp=4 (instead of --dp/--tp); ranks are "
                      "laid out row-major, the last axis fastest"),
             cl::value_desc("AXIS=N,..."), cl::cat(meshCategory));
cl::opt<int64_t> maxRanks("max-ranks",
                          cl::desc("The most ranks (devices) a mesh may have (default 4096)"),
                          cl::value_desc("N"), cl::init(driver::kDefaultMaxRanks),
                          cl::cat(meshCategory));
cl::opt<std::string>
    deviceName("device",
               cl::desc("The device the cost model prices: h100 (default), h200 or a JSON file "
                        "(README: Device description)"),
               cl::value_desc("name|file"), cl::init("h100"), cl::cat(meshCategory));
cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("Memory per device the plan must fit (weights + peak activations), e.g. 80GiB; "
             "default: the device's"),
    cl::value_desc("size"), cl::cat(meshCategory));
cl::opt<std::string>
    reportPath("report",
               cl::desc("Write the plan's report (collectives, memory, estimated time) as JSON"),
               cl::value_desc("FILE.json"), cl::cat(meshCategory));
cl::opt<bool> verbose("verbose", cl::desc("Print the plan's summary on stderr"),
                      cl::cat(meshCategory));

/// Parses the command line: --help lists shardc's own flags, --help-hidden
/// MLIR's and LLVM's too; every error is one line.
bool parseCommandLine(int argc, char **argv) {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  const cl::OptionCategory *categories[] = {&shardcCategory, &meshCategory};
  driver::ToolCommandLine commandLine{
      kTool,
      "shardc: compiles ONNX transformer models for many devices\n\n"
      "  MLIR's pass-manager, timing and printer options (--mlir-print-ir-after-all,\n"
      "  --mlir-timing, ...) and LLVM's are listed by --help-hidden.\n",
      categories,
      llvm::formatv("shardc {0}\nbuilt with LLVM and MLIR {1}\nwrites artifact version {2}\n",
                    SHARDC_VERSION, LLVM_VERSION_STRING, artifact::kArtifactVersion)
          .str()};
  if (!driver::parseToolCommandLine(argc, argv, commandLine))
    return false;
  if (modelPath.empty()) {
    driver::printError(kTool, "no model given; usage: shardc MODEL [-o OUT] [--emit=PHASE]");
    return false;
  }
  return true;
}

/// Writes `text` to `path` (after the compilation succeeded).
bool writeFile(StringRef path, StringRef text) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(path, &error);
  if (!output) {
    driver::printError(kTool, path + ": " + error);
    return false;
  }
  output->os() << text;
  output->os().flush();
  // A full disk or `ulimit -f`: one line, and the partial file is removed
  // (not kept) instead of LLVM's fatal "IO failure on output stream".
  if (std::error_code error = output->os().error()) {
    driver::printError(kTool, path + ": write failed: " + error.message());
    output->os().clear_error();
    return false;
  }
  output->keep();
  return true;
}

int run() {
  std::optional<driver::Phase> phase = driver::parsePhase(emitPhase);
  if (!phase) {
    driver::printError(kTool,
                       "--emit '" + emitPhase + "': expected one of " + driver::phaseNames());
    return 1;
  }
  if (target != "cpu" && target != "cuda") {
    driver::printError(kTool, "--target '" + target + "': expected cpu or cuda");
    return 1;
  }
  static const char *const archs[] = {"sm_80", "sm_89", "sm_90", "sm_90a"};
  if (!cudaArch.empty() && target != "cuda") {
    driver::printError(kTool, "--cuda-arch '" + cudaArch + "' needs --target=cuda");
    return 1;
  }
  std::string arch = cudaArch.empty() ? (target == "cuda" ? "sm_90" : "") : cudaArch.getValue();
  if (!arch.empty() && !llvm::is_contained(archs, arch)) {
    driver::printError(kTool, "--cuda-arch '" + arch + "': expected sm_80, sm_89, sm_90 or sm_90a");
    return 1;
  }
  std::optional<std::string> storage = llvm::StringSwitch<std::optional<std::string>>(dtype)
                                           .Case("fp32", "")
                                           .Case("bf16", "bf16")
                                           .Case("fp16", "f16")
                                           .Default(std::nullopt);
  if (!storage) {
    driver::printError(kTool, "--dtype '" + dtype + "': expected fp32, bf16 or fp16");
    return 1;
  }
  if (*phase == driver::Phase::Artifact && (outputPath.empty() || outputPath == "-")) {
    driver::printError(kTool, "the artifact is a directory; give it with -o OUT/");
    return 1;
  }
  // Output paths are checked before compiling: a refused one costs nothing.
  if (llvm::Error error = *phase == driver::Phase::Artifact
                              ? artifact::checkArtifactDestination(outputPath).takeError()
                              : llvm::Error::success()) {
    driver::printError(kTool, llvm::toString(std::move(error)));
    return 1;
  }
  if (llvm::Error error =
          reportPath.empty() ? llvm::Error::success() : driver::checkOutputFile(reportPath)) {
    driver::printError(kTool, "--report " + llvm::toString(std::move(error)));
    return 1;
  }
  auto importOptions = driver::parseImportOptions(dimBindings, inputShapes, constantInputs);
  if (!importOptions) {
    driver::printError(kTool, llvm::toString(importOptions.takeError()));
    return 1;
  }
  auto dp = driver::parseDegree(rt::kDataAxis, dataParallel);
  auto tp = driver::parseDegree(rt::kTensorAxis, tensorParallel);
  if (!dp || !tp) {
    driver::printError(kTool, llvm::toString(dp ? tp.takeError() : dp.takeError()));
    return 1;
  }
  auto mesh = driver::parseMesh(meshSpec, *dp, *tp);
  if (!mesh) {
    driver::printError(kTool, llvm::toString(mesh.takeError()));
    return 1;
  }
  if (llvm::Error error = driver::checkRankCount(*mesh, maxRanks)) {
    driver::printError(kTool, llvm::toString(std::move(error)));
    return 1;
  }
  if (sequenceParallel && !mesh->axis(rt::kTensorAxis)) {
    driver::printError(kTool, "--sp splits activations over tp; give --tp N with N > 1");
    return 1;
  }
  driver::PipelineSettings settings{*storage, target, sequenceParallel, deviceName, 0};
  if (!deviceMemory.empty()) {
    auto bytes = driver::parseByteSize("device-memory", deviceMemory);
    if (!bytes) {
      driver::printError(kTool, llvm::toString(bytes.takeError()));
      return 1;
    }
    settings.deviceMemory = *bytes;
  }
  auto device = sharding::DeviceModel::load(deviceName);
  if (!device) {
    driver::printError(kTool, llvm::toString(device.takeError()));
    return 1;
  }

  DialectRegistry registry;
  registry.insert<graph::GraphDialect, dist::DistDialect, exec::ExecDialect, func::FuncDialect>();
  MLIRContext context(registry);
  driver::OneLineDiagnostics diagnostics(context, kTool);

  auto model = import::loadModel(modelPath);
  if (!model) {
    driver::printError(kTool, llvm::toString(model.takeError()));
    return 1;
  }
  auto imported = import::importModel(context, *model, *importOptions);
  if (failed(imported))
    return 1;
  ModuleOp module = **imported;
  std::string batchWarning = driver::batchSplitWarning(module, *mesh);
  if (mesh->numAxes()) {
    context.getOrLoadDialect<dist::DistDialect>();
    OpBuilder builder(module.getBodyRegion());
    builder.create<dist::MeshOp>(module.getLoc(), "mesh", ArrayRef<std::string>(mesh->names),
                                 ArrayRef<int64_t>(mesh->sizes));
  }

  // The report describes the sharded program: reached on the way to a later
  // phase, or on a copy when the output stops earlier.
  std::optional<report::Report> report;
  bool wantReport = !reportPath.empty() || verbose;
  auto makeReport = [&](ModuleOp sharded) {
    // The cost model prices GPUs: a CPU plan's summary prints no GPU's times
    // unless --device asks for them.
    bool priced = target == "cuda" || deviceName.getNumOccurrences() > 0;
    auto built = report::buildReport(sharded, *device, priced);
    if (succeeded(built))
      report = std::move(*built);
    return succeeded(built);
  };
  if (wantReport && *phase >= driver::Phase::Sharded) {
    if (failed(driver::runPipeline(module, std::nullopt, driver::Phase::Sharded, settings)) ||
        !makeReport(module) ||
        failed(driver::runPipeline(module, driver::Phase::Sharded, *phase, settings)))
      return 1;
  } else {
    if (failed(driver::runPipeline(module, std::nullopt, *phase, settings)))
      return 1;
    if (wantReport) {
      OwningOpRef<ModuleOp> copy = module.clone();
      if (failed(driver::runPipeline(*copy, *phase, driver::Phase::Sharded, settings)) ||
          !makeReport(*copy))
        return 1;
    }
  }

  if (*phase == driver::Phase::Artifact) {
    artifact::ArtifactOptions artifactOptions{target, arch, modelPath};
    if (failed(artifact::writeArtifact(module, outputPath, artifactOptions)))
      return 1;
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags());
    if (!writeFile(outputPath, text))
      return 1;
  }
  if (report && !reportPath.empty())
    if (llvm::Error error = driver::writeFileAtomically(
            reportPath, llvm::formatv("{0:2}", report->json).str() + "\n")) {
      driver::printError(kTool, "--report " + llvm::toString(std::move(error)));
      return 1;
    }
  if (report && verbose)
    llvm::errs() << report->summary;
  if (!batchWarning.empty())
    llvm::errs() << kTool << ": warning: " << batchWarning << "\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Past `ulimit -f` a write fails with EFBIG, reported as one line, instead
  // of SIGXFSZ killing the process (LLVM's handler would print a stack dump).
  std::signal(SIGXFSZ, SIG_IGN);
  if (!parseCommandLine(argc, argv))
    return 1;
  return run();
}
