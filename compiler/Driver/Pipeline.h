//===- Pipeline.h - the compiler's phases, as --emit names them -*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_PIPELINE_H
#define SHARDC_COMPILER_DRIVER_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace shardc::driver {

/// Where the pipeline stops; later phases extend this list.
enum class Phase {
  Import,      ///< imported, shape arithmetic folded, cleaned up
  Graph,       ///< plus raising: linear, attention, norms, MLP, MoE recognized
  Sharded,     ///< every op's sharding chosen, every reshard explicit (global program)
  Partitioned, ///< rewritten as the per-device program with collectives
  Exec,        ///< lowered to kernel steps on buffers, fused, memory planned
  Artifact,    ///< the exec program written as a runnable artifact directory
};

std::optional<Phase> parsePhase(llvm::StringRef name);
/// "import|graph|sharded|partitioned|exec|artifact", for --help.
llvm::StringRef phaseNames();

/// --bucket-mb's default on CUDA, as PyTorch DDP's bucket_cap_mb.
inline constexpr double kCudaBucketMb = 25;

/// --train: what shardc-autodiff appends to the model (docs/training.md).
struct TrainingSettings {
  std::string loss; ///< KIND:OUTPUT
  std::string optimizer = "adamw";
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = -1; ///< negative: the optimizer's default
  bool noDecay1d = false;  ///< no decay on parameters of fewer than two dims
  /// --zero: the ZeRO stage (0: plain data parallelism), or with zeroAuto
  /// the least stage whose plan fits the device memory.
  unsigned zero = 0;
  bool zeroAuto = false;
  /// --bucket-mb: the gradient sums and weight gathers fused into buckets
  /// of at most this many MiB of input per rank (0: none; docs/training.md);
  /// by default kCudaBucketMb on CUDA and none on the CPU.
  double bucketMb = 0;
  double momentum = 0, gradClip = 0;
  std::vector<std::string> freeze;
  bool untie = false; ///< --untie: duplicated weights trained apart
  /// --pp: the backward's ops are tagged with the forward op they belong to.
  bool pipelined = false;
  /// --microbatches: the batch runs in this many pieces, one after another,
  /// their gradients summed before the one update (docs/training.md).
  int64_t microbatches = 1;
};

/// What the phases are asked for beyond their order.
struct PipelineSettings {
  /// Storage type of float tensors: "" (as the model has them), "bf16", "f16".
  std::string dtype;
  /// "cpu" or "cuda" (which also generates the fused kernels' CUDA code).
  std::string target = "cpu";
  /// How to shard, when the module has a dist.mesh.
  bool sequenceParallel = false;
  std::string device = "h100";
  int64_t deviceMemory = 0; ///< bytes; 0: the device's
  /// --moe-capacity-factor; 0: every routed entry kept (dropless).
  double moeCapacityFactor = 0;
  /// With --train: the graph phase ends with the training step.
  std::optional<TrainingSettings> training;
};

/// Runs the passes that take a module from `from` (the phase it is at;
/// none: just imported) to `until`.
mlir::LogicalResult runPipeline(mlir::ModuleOp module, std::optional<Phase> from, Phase until,
                                const PipelineSettings &settings);

} // namespace shardc::driver

#endif
