//===- shardc.cpp - the shardc compiler driver ----------------------------===//
//
//   shardc MODEL [-o OUT] [--emit=PHASE] [--target=cpu|cuda] [--cuda-arch SM]
//          [--dtype fp32|bf16|fp16] [--dim NAME=N]... [--input-shape IN=D0xD1]...
//          [--constant-input IN=VALUES|IN=FILE.pb]... [--tp N] [--dp N] [--sp]
//          [--pp N] [--microbatches M] [--schedule gpipe|interleaved|1f1b|zb-h1|zb-h2]
//          [--virtual-stages V] [--pp-split NODE,...] [--mesh AXIS=N,...] [--max-ranks N] [--device
//          NAME|FILE.json]
//          [--device-memory SIZE] [--report FILE.json] [--verbose] [--weights-dir DIR]...
//
// MODEL is an ONNX model or an MLIR module as --emit=graph prints it. The
// tool only parses flags: compiler/Driver/Compile.h does the compiling. Every
// error is one line on stderr and exit code 1; the output file is written
// only when the whole compilation succeeded.
//
//===----------------------------------------------------------------------===//
#include "compiler/Artifact/ArtifactWriter.h"
#include "compiler/Driver/CommandLine.h"
#include "compiler/Driver/Compile.h"
#include "compiler/Driver/Diagnostics.h"
#include "runtime/core/MeshAxes.h"
#include "runtime/io/SignalCleanup.h"
#include "tools/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"

#include <csignal>

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

namespace {

constexpr const char *kTool = "shardc";

cl::OptionCategory shardcCategory("shardc options");

cl::opt<std::string> modelPath(cl::Positional,
                               cl::desc("<model.onnx | model.onnxtext | model.mlir>"),
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

cl::list<std::string> weightsDirs(
    "weights-dir",
    cl::desc("With an MLIR module: a folder its weight files may also lie in (by default only "
             "the module's own folder, where a relative path starts; repeatable)"),
    cl::value_desc("DIR"), cl::cat(shardcCategory));

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
cl::opt<std::string> expertParallel(
    llvm::StringRef(rt::kExpertAxis),
    cl::desc("Expert-parallel degree: split each mixture-of-experts layer's experts over N of the "
             "data-parallel devices (N divides --dp; alone it means --dp N), tokens sent to their "
             "experts' devices and back by all-to-all"),
    cl::value_desc("N"), cl::cat(meshCategory));
cl::opt<std::string> pipelineParallel(
    llvm::StringRef(rt::kPipelineAxis),
    cl::desc("Pipeline-parallel degree: cut the model into stages run by N groups of devices "
             "(the outermost mesh axis)"),
    cl::value_desc("N"), cl::cat(meshCategory));
cl::opt<std::string> microbatches(
    "microbatches",
    cl::desc("With --pp: cut the batch into M micro-batches that flow through the stages one "
             "after another; with --train: run the step's batch in M pieces, summing their "
             "gradients before the update (gradient accumulation; default 1)"),
    cl::value_desc("M"), cl::cat(meshCategory));
cl::opt<std::string>
    schedule("schedule",
             cl::desc("With --pp: the micro-batch schedule, gpipe (fill and drain; the default "
                      "without --train), interleaved (each rank runs --virtual-stages stages), "
                      "and with --train 1f1b (the default), zb-h1 or zb-h2 (zero bubble: "
                      "weight gradients fill the bubbles)"),
             cl::value_desc("gpipe|interleaved|1f1b|zb-h1|zb-h2"), cl::cat(meshCategory));
cl::opt<std::string> recompute(
    "recompute",
    cl::desc("With --train --pp: what a stage's backward computes again instead of keeping from "
             "its forward for every micro-batch in flight: selective (the default; the attention "
             "core, as attention's backward always recomputes it), full (the stage's whole "
             "forward: only what the stage receives is kept) or auto (full on the stages that "
             "do not fit --device-memory otherwise)"),
    cl::value_desc("selective|full|auto"), cl::cat(meshCategory));
cl::opt<std::string> virtualStages(
    "virtual-stages",
    cl::desc("With --schedule interleaved: stages per pipeline rank (the model is cut into "
             "pp x V stages)"),
    cl::value_desc("V"), cl::cat(meshCategory));
// Split by the driver, not llvm::cl: a node name may hold a comma ('\,').
cl::list<std::string> pipelineSplits(
    "pp-split",
    cl::desc("With --pp: ONNX node names after which a stage must end (the other cuts are "
             "chosen by the cost model); '\\,' is a comma inside a name (repeatable)"),
    cl::value_desc("NODE,..."), cl::cat(meshCategory));
cl::opt<bool> sequenceParallel(
    "sp",
    cl::desc("Sequence parallelism: keep the activations between blocks split along the sequence "
             "over tp (each all-reduce becomes a reduce-scatter plus an all-gather)"),
    cl::cat(meshCategory));
cl::opt<std::string> meshSpec(
    "mesh",
    cl::desc("The device mesh by axes pp, dpr, dp, ep, tp, e.g. pp=2,dp=2,tp=4 (instead of "
             "--pp/--dp/--ep/--tp; dpr: copies of ZeRO groups, see --zero-group); "
             "ranks are laid out row-major, the last axis fastest"),
    cl::value_desc("AXIS=N,..."), cl::cat(meshCategory));
cl::opt<int64_t> maxRanks("max-ranks",
                          cl::desc("The most ranks (devices) a mesh may have (default 4096)"),
                          cl::value_desc("N"), cl::init(driver::kDefaultMaxRanks),
                          cl::cat(meshCategory));
cl::opt<std::string>
    deviceName("device",
               cl::desc("The device the cost model prices: a100, h100 (default), h200 or a JSON file "
                        "(README: Device description)"),
               cl::value_desc("name|file"), cl::init("h100"), cl::cat(meshCategory));
cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("Memory per device the plan must fit (weights + peak activations), e.g. 80GiB; "
             "default: the device's"),
    cl::value_desc("size"), cl::cat(meshCategory));
cl::opt<std::string> moeCapacityFactor(
    "moe-capacity-factor",
    cl::desc("Each mixture-of-experts expert keeps at most F x its average share of the tokens' "
             "routed entries; the rest are dropped (first tokens kept) and counted by shardrun "
             "--profile (default: none dropped)"),
    cl::value_desc("F"), cl::cat(meshCategory));
cl::opt<std::string>
    reportPath("report",
               cl::desc("Write the plan's report (collectives, memory, estimated time) as JSON"),
               cl::value_desc("FILE.json"), cl::cat(meshCategory));
cl::opt<bool> verbose("verbose", cl::desc("Print the plan's summary on stderr"),
                      cl::cat(meshCategory));

cl::OptionCategory trainingCategory("Training (docs/training.md)");
cl::opt<bool> train("train",
                    cl::desc("Compile one training step (forward, backward, optimizer update) "
                             "instead of inference; shardrun --train runs it"),
                    cl::cat(trainingCategory));
cl::opt<std::string>
    loss("loss",
         cl::desc("What the step minimizes: causal-lm:OUTPUT (next-token cross-entropy, adds "
                  "int64 input 'labels', -100 ignored), cross-entropy:OUTPUT (no shift), "
                  "mse:OUTPUT (adds float32 input 'target') or output:NAME (a scalar output)"),
         cl::value_desc("KIND:OUTPUT"), cl::cat(trainingCategory));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("adamw (default) or sgd, as torch.optim has them"),
                               cl::value_desc("name"), cl::cat(trainingCategory));
cl::opt<std::string> learningRate("lr", cl::desc("Learning rate (default 1e-3)"),
                                  cl::value_desc("X"), cl::cat(trainingCategory));
cl::opt<std::string> betas("betas", cl::desc("AdamW's moment decays (default 0.9,0.999)"),
                           cl::value_desc("B1,B2"), cl::cat(trainingCategory));
cl::opt<std::string> epsilon("eps", cl::desc("AdamW's denominator term (default 1e-8)"),
                             cl::value_desc("E"), cl::cat(trainingCategory));
cl::opt<std::string> weightDecay(
    "weight-decay",
    cl::desc("AdamW's decoupled weight decay (default 0.01) or SGD's L2 term (default 0)"),
    cl::value_desc("W"), cl::cat(trainingCategory));
cl::opt<std::string> momentum("momentum", cl::desc("SGD's momentum (default 0)"),
                              cl::value_desc("M"), cl::cat(trainingCategory));
cl::opt<std::string> gradClip(
    "grad-clip",
    cl::desc("Scale the gradients down to this global L2 norm over every parameter of every "
             "rank when it is larger (torch's clip_grad_norm_); default: no clipping"),
    cl::value_desc("NORM"), cl::cat(trainingCategory));
cl::list<std::string> freeze("freeze", cl::desc("Initializers not trained: names or name prefixes"),
                             cl::value_desc("NAME,..."), cl::CommaSeparated,
                             cl::cat(trainingCategory));

cl::opt<bool> noDecay1d(
    "no-decay-1d",
    cl::desc("No weight decay on parameters of fewer than two dims (biases, norm scales), as "
             "Megatron-LM and transformers' Trainer train; default: every parameter decays, as "
             "torch.optim does"),
    cl::cat(trainingCategory));
cl::opt<std::string> zero(
    "zero",
    cl::desc("ZeRO over dp: 1 splits the optimizer state and update (gradients all-reduced, new "
             "weights all-gathered), 2 also the gradients (reduce-scattered), 3 also the weights "
             "(gathered at each use); auto: the least stage whose plan fits --device-memory; "
             "default 0: every dp rank holds all of them"),
    cl::value_desc("0|1|2|3|auto"), cl::cat(trainingCategory));
cl::opt<bool> fsdp("fsdp", cl::desc("The same as --zero 3 (PyTorch's FSDP)"),
                   cl::cat(trainingCategory));
cl::opt<std::string> bucketMb(
    "bucket-mb",
    cl::desc("Gradient sums and ZeRO's weight gathers fused into buckets of at most N MiB per "
             "rank (fractions allowed), as PyTorch DDP's; default 25 on --target cuda, 0 (one "
             "collective per tensor) on the CPU, where the buckets' copies cost more than the "
             "collectives they save"),
    cl::value_desc("N"), cl::cat(trainingCategory));
cl::opt<std::string> zeroGroup(
    "zero-group",
    cl::desc("Hybrid sharding (HSDP): ZeRO splits the model state over groups of G consecutive "
             "dp ranks, and the groups hold copies (the gradient slices all-reduced across "
             "them); G divides --dp; default: one group of every dp rank"),
    cl::value_desc("G"), cl::cat(trainingCategory));
cl::opt<bool> untie("untie",
                    cl::desc("Train initializers that hold the same bytes (directly or transposed, "
                             "as an exported tied LM head) as separate parameters"),
                    cl::cat(trainingCategory));

/// Parses the command line: --help lists shardc's own flags, --help-hidden
/// MLIR's and LLVM's too; every error is one line.
bool parseCommandLine(int argc, char **argv) {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  const cl::OptionCategory *categories[] = {&shardcCategory, &meshCategory, &trainingCategory};
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

/// shardc's flags as the driver takes them.
driver::CompileOptions compileOptions() {
  driver::CompileOptions options;
  options.modelPath = modelPath;
  options.weightsDirs = weightsDirs;
  options.outputPath = outputPath;
  options.emit = emitPhase;
  options.target = target;
  options.cudaArch = cudaArch;
  options.dtype = dtype;
  options.dims = dimBindings;
  options.inputShapes = inputShapes;
  options.constantInputs = constantInputs;
  options.tensorParallel = tensorParallel;
  options.dataParallel = dataParallel;
  options.expertParallel = expertParallel;
  options.pipelineParallel = pipelineParallel;
  options.microbatches = microbatches;
  options.schedule = schedule;
  options.recompute = recompute;
  options.virtualStages = virtualStages;
  options.pipelineSplits = pipelineSplits;
  options.mesh = meshSpec;
  options.sequenceParallel = sequenceParallel;
  options.maxRanks = maxRanks;
  options.device = deviceName;
  options.deviceGiven = deviceName.getNumOccurrences() > 0;
  options.deviceMemory = deviceMemory;
  options.moeCapacityFactor = moeCapacityFactor;
  options.reportPath = reportPath;
  options.verbose = verbose;
  options.train = train;
  options.loss = loss;
  options.optimizer = optimizer;
  options.learningRate = learningRate;
  options.betas = betas;
  options.epsilon = epsilon;
  options.weightDecay = weightDecay;
  options.momentum = momentum;
  options.gradClip = gradClip;
  options.freeze = freeze;
  options.untie = untie;
  options.noDecay1d = noDecay1d;
  options.zero = zero;
  options.fsdp = fsdp;
  options.bucketMb = bucketMb;
  options.zeroGroup = zeroGroup;
  return options;
}

} // namespace

int main(int argc, char **argv) {
  const rt::io::IgnoredStoppingSignals startedIgnored;
  llvm::InitLLVM initLLVM(argc, argv);
  startedIgnored.reapply();
  // Past `ulimit -f` a write fails with EFBIG, reported as one line, instead
  // of SIGXFSZ killing the process (LLVM's handler would print a stack dump).
  std::signal(SIGXFSZ, SIG_IGN);
  if (!parseCommandLine(argc, argv))
    return 1;
  return driver::compile(compileOptions(), kTool);
}
