//===- Limits.h - how large a compilation shardc accepts --------*- C++ -*-===//
//
// Flags and models can ask for more than any machine has: `--dp 1000000`
// would write two million rank files and bound symbolic dims can plan a
// terabyte arena (refused with one line naming the number and the limit);
// a data-parallel degree above the batch only replicates (a warning).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_LIMITS_H
#define SHARDC_COMPILER_DRIVER_LIMITS_H

#include "passes/Sharding/MeshShape.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace shardc::driver {

/// Ranks a mesh may have unless --max-ranks says otherwise: an artifact
/// holds two files per rank.
constexpr int64_t kDefaultMaxRanks = 4096;

/// Fails when the mesh has more than `maxRanks` devices (or more than int64
/// counts).
llvm::Error checkRankCount(const sharding::MeshShape &mesh, int64_t maxRanks);

/// A warning when the mesh's dp axis is larger than every input's batch
/// (dim 0), empty otherwise: data parallelism splits the batch, and the
/// ranks beyond it only hold copies. A warning, not an error, since a graph
/// exported at batch 1 may be compiled for dp on purpose (the test suites
/// compile every fixture at --dp 2); it is printed once the compilation
/// succeeded, so that a failure stays one line.
std::string batchSplitWarning(mlir::ModuleOp module, const sharding::MeshShape &mesh);

} // namespace shardc::driver

#endif
