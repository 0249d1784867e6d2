//===- Pipeline.h - the compiler's phases, as --emit names them -*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_PIPELINE_H
#define SHARDC_COMPILER_DRIVER_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

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
};

/// Runs the passes that take a module from `from` (the phase it is at;
/// none: just imported) to `until`.
mlir::LogicalResult runPipeline(mlir::ModuleOp module, std::optional<Phase> from, Phase until,
                                const PipelineSettings &settings);

} // namespace shardc::driver

#endif
