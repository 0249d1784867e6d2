//===- ProgramSerializer.h - an exec function as a FlatBuffer ---*- C++ -*-===//
#ifndef SHARDC_COMPILER_ARTIFACT_PROGRAMSERIALIZER_H
#define SHARDC_COMPILER_ARTIFACT_PROGRAMSERIALIZER_H

#include "passes/Sharding/MeshShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace shardc::artifact {

/// The program's bytes (schema runtime/schemas/program.fbs), or a diagnostic
/// at the op that cannot be expressed.
/// The program as a FlatBuffer (runtime/schemas/program.fbs) for a `mesh`
/// (no axes: one device).
/// A training step writes each parameter and optimizer state of `programs`
/// (one step, or a pipeline stage's programs) exactly once: a state no step
/// writes would be trained storage a pass copied (its copy then never
/// learns), two writes a race on it. An error at the first that is not.
mlir::LogicalResult checkStorageWrites(llvm::ArrayRef<mlir::func::FuncOp> programs);

mlir::FailureOr<std::vector<uint8_t>> serializeProgram(mlir::func::FuncOp program,
                                                       const sharding::MeshShape &mesh);

} // namespace shardc::artifact

#endif
