//===- Pipeline.h - the compiler's phases, as --emit names them -*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_PIPELINE_H
#define SHARDC_COMPILER_DRIVER_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace shardc::driver {

/// Where the pipeline stops; later phases extend this list.
enum class Phase {
  Import, ///< imported, shape arithmetic folded, cleaned up
  Graph,  ///< plus raising: linear, attention, norms, MLP, MoE recognized
  Exec,   ///< lowered to kernel steps on buffers, fused, memory planned
  Artifact, ///< the exec program written as a runnable artifact directory
};

std::optional<Phase> parsePhase(llvm::StringRef name);
/// "import|graph|exec|artifact", for --help.
llvm::StringRef phaseNames();

/// Runs the passes that take an imported module to `until`.
mlir::LogicalResult runPipeline(mlir::ModuleOp module, Phase until);

} // namespace shardc::driver

#endif
