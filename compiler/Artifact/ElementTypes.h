//===- ElementTypes.h - MLIR element types as runtime dtypes ----*- C++ -*-===//
#ifndef SHARDC_COMPILER_ARTIFACT_ELEMENTTYPES_H
#define SHARDC_COMPILER_ARTIFACT_ELEMENTTYPES_H

#include "runtime/core/Tensor.h"
#include "runtime/schemas/program_generated.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace shardc::artifact {

std::optional<rt::DType> runtimeDType(mlir::Type elementType);
std::optional<schema::DType> schemaDType(mlir::Type elementType);

} // namespace shardc::artifact

#endif
