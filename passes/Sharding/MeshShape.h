//===- MeshShape.h - the device mesh as the sharding passes see it -*- C++ -*-===//
//
// The runtime's MeshShape (runtime/core/Mesh.h, where the rank layout is
// written once: row-major, the last axis fastest) with what the passes need
// on top: axes by index, and the size of a group over several axes.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_MESHSHAPE_H
#define SHARDC_PASSES_SHARDING_MESHSHAPE_H

#include "runtime/core/Mesh.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace shardc::sharding {

struct MeshShape : rt::MeshShape {
  unsigned numAxes() const { return names.size(); }
  /// The number of devices a group over `axes` holds.
  int64_t groupSize(llvm::ArrayRef<unsigned> axes) const;
  std::optional<unsigned> axis(llvm::StringRef name) const;
  /// The data-parallel ranks: dp's size times HSDP's replicas (dpr), 1
  /// when neither axis is there.
  int64_t dataParallelRanks() const;
};

/// With a pipeline the module's dist.mesh is the stages' mesh (dp, tp and
/// the compiler's micro-batch axis); the devices are those axes but mb, with
/// pp (of `pipelineRanks`) outermost (docs/pipeline.md). Without a pipeline
/// (`pipelineRanks` 1) the two are the same.
MeshShape devicesOfStages(const MeshShape &stages, int64_t pipelineRanks);
/// The inverse for the driver: the devices less pp, with mb (of
/// `microbatches`, when more than 1) in front.
MeshShape stagesOfDevices(const MeshShape &devices, int64_t microbatches);

} // namespace shardc::sharding

#endif
