//===- RankBlocks.h - which block of each weight a rank holds ---*- C++ -*-===//
//
// A rank's weight file holds, for every weight of its program, the block its
// mesh coordinates select (and zeros where it holds no share of a partial
// sum). Ranks that differ only along axes no weight is cut over (data
// parallel replicas, the pipeline's other ranks of a stage) select the same
// blocks, so their files would be byte for byte the same: the artifact
// writes such a file once and names it for each of them.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_ARTIFACT_RANKBLOCKS_H
#define SHARDC_COMPILER_ARTIFACT_RANKBLOCKS_H

#include "dialects/Exec/ExecDialect.h"
#include "passes/Sharding/MeshShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace shardc::artifact {

/// One rank's block of one weight, in the weight's stored orientation (a
/// pre-transposed copy is cut before it is transposed).
struct RankBlock {
  llvm::SmallVector<int64_t> local;   ///< the block's shape
  llvm::SmallVector<int64_t> global;  ///< the whole weight's shape
  llvm::SmallVector<int64_t> offsets; ///< where the block starts in it
  bool holdsValue = true;             ///< false: zeros, another rank holds the sum
};

/// The block of `weight` the rank at `coords` of `mesh` holds; fails with a
/// diagnostic when the weight's sharding does not fit the mesh.
mlir::FailureOr<RankBlock> rankBlockOf(exec::WeightOp weight, const sharding::MeshShape &mesh,
                                       llvm::ArrayRef<int64_t> coords);

/// Equal for two ranks exactly when every weight of `programs` (those that
/// read one weight file) gives them the same block (offsets and whether it
/// holds the value).
mlir::FailureOr<std::vector<int64_t>> blocksKey(llvm::ArrayRef<mlir::func::FuncOp> programs,
                                                const sharding::MeshShape &mesh,
                                                llvm::ArrayRef<int64_t> coords);

} // namespace shardc::artifact

#endif
