//===- TrainingOptions.h - --train and the optimizer's flags ----*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_TRAININGOPTIONS_H
#define SHARDC_COMPILER_DRIVER_TRAININGOPTIONS_H

#include "compiler/Driver/Pipeline.h"
#include "passes/Sharding/MeshShape.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace shardc::driver {

struct CompileOptions;

/// The training step the flags ask for (none without --train). An optimizer
/// flag without --train, or one the chosen optimizer does not have, is an
/// error, as are the combinations training does not support yet.
llvm::Expected<std::optional<TrainingSettings>> parseTrainingOptions(const CompileOptions &options);

/// ZeRO's place on the device mesh: a stage needs dp ranks to split the
/// model state over, and `--zero-group G` (hybrid sharding, HSDP) replaces
/// the dp axis of D ranks by dpr = D/G replicas of dp = G ranks
/// (runtime/core/MeshAxes.h), so ZeRO splits over each group of G and the
/// groups hold copies.
llvm::Error placeZeroOnMesh(const CompileOptions &options,
                            const std::optional<TrainingSettings> &training,
                            sharding::MeshShape &mesh);

} // namespace shardc::driver

#endif
