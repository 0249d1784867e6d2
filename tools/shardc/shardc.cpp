//===- shardc.cpp - the shardc compiler driver ----------------------------===//
//
//   shardc MODEL [-o OUT] [--emit=PHASE] [--dim NAME=N]... [--input-shape IN=D0xD1]...
//
// Every error is one line on stderr and exit code 1; the output file is
// written only when the whole compilation succeeded.
//
//===----------------------------------------------------------------------===//
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Driver/Diagnostics.h"
#include "compiler/Driver/Options.h"
#include "compiler/Driver/Pipeline.h"
#include "compiler/Import/Importer.h"

#include "dialects/Exec/ExecDialect.h"
#include "dialects/Graph/GraphDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

namespace {

constexpr const char *kTool = "shardc";

cl::OptionCategory shardcCategory("shardc options");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx | model.onnxtext>"),
                               cl::cat(shardcCategory));
cl::opt<std::string> outputPath(
    "o", cl::desc("Where to write the result: the artifact directory, or for an MLIR --emit a "
                  "file ('-' is stdout)"),
    cl::value_desc("path"), cl::init("-"), cl::cat(shardcCategory));
cl::opt<std::string> emitPhase(
    "emit",
    cl::desc("What to write: 'artifact' (default: the directory shardrun runs), or the MLIR "
             "after a phase: 'import' (imported and folded), 'graph' (also raised: linear, "
             "attention, norms, MLP, MoE) or 'exec' (lowered to kernel steps, fused, memory "
             "planned)"),
    cl::value_desc("phase"), cl::init("artifact"), cl::cat(shardcCategory));
cl::opt<std::string> target("target", cl::desc("The devices to compile for: 'cpu'"),
                            cl::value_desc("name"), cl::init("cpu"), cl::cat(shardcCategory));
cl::list<std::string> dimBindings(
    "dim", cl::desc("Bind the symbolic dim NAME of the model's inputs to N (repeatable)"),
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

/// Parses the command line; LLVM's own parse errors are turned into our one-line form.
bool parseCommandLine(int argc, char **argv) {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions({&shardcCategory, &cl::getGeneralCategory()});
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "shardc: compiles ONNX transformer models for many devices\n",
                                   &errorStream)) {
    StringRef first = StringRef(errors).split('\n').first;
    first.consume_front(argv[0]);
    first.consume_front(": ");
    driver::printError(kTool, first.trim());
    return false;
  }
  if (modelPath.empty()) {
    driver::printError(kTool, "no model given; usage: shardc MODEL [-o OUT] [--emit=PHASE]");
    return false;
  }
  return true;
}

int run() {
  std::optional<driver::Phase> phase = driver::parsePhase(emitPhase);
  if (!phase) {
    driver::printError(kTool, "--emit '" + emitPhase + "': expected one of " +
                                  driver::phaseNames());
    return 1;
  }
  if (target != "cpu") {
    driver::printError(kTool, "--target '" + target + "': expected cpu");
    return 1;
  }
  if (*phase == driver::Phase::Artifact && (outputPath.empty() || outputPath == "-")) {
    driver::printError(kTool, "the artifact is a directory; give it with -o OUT/");
    return 1;
  }
  auto importOptions = driver::parseImportOptions(dimBindings, inputShapes, constantInputs);
  if (!importOptions) {
    driver::printError(kTool, llvm::toString(importOptions.takeError()));
    return 1;
  }

  DialectRegistry registry;
  registry.insert<graph::GraphDialect, exec::ExecDialect, func::FuncDialect>();
  MLIRContext context(registry);
  driver::OneLineDiagnostics diagnostics(context, kTool);

  auto model = import::loadModel(modelPath);
  if (!model) {
    driver::printError(kTool, llvm::toString(model.takeError()));
    return 1;
  }
  auto module = import::importModel(context, *model, *importOptions);
  if (failed(module) || failed(driver::runPipeline(**module, *phase)))
    return 1;
  if (*phase == driver::Phase::Artifact) {
    artifact::ArtifactOptions artifactOptions{target, modelPath};
    return failed(artifact::writeArtifact(**module, outputPath, artifactOptions)) ? 1 : 0;
  }

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(outputPath, &error);
  if (!output) {
    driver::printError(kTool, outputPath + ": " + error);
    return 1;
  }
  (*module)->print(output->os(), OpPrintingFlags());
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (!parseCommandLine(argc, argv))
    return 1;
  return run();
}
