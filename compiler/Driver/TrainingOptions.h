//===- TrainingOptions.h - --train and the optimizer's flags ----*- C++ -*-===//
#ifndef SHARDC_COMPILER_DRIVER_TRAININGOPTIONS_H
#define SHARDC_COMPILER_DRIVER_TRAININGOPTIONS_H

#include "compiler/Driver/Pipeline.h"

#include "llvm/Support/Error.h"

#include <optional>

namespace shardc::driver {

struct CompileOptions;

/// The training step the flags ask for (none without --train). An optimizer
/// flag without --train, or one the chosen optimizer does not have, is an
/// error, as are the combinations training does not support yet.
llvm::Expected<std::optional<TrainingSettings>> parseTrainingOptions(const CompileOptions &options);

} // namespace shardc::driver

#endif
