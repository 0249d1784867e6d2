//===- InputModule.h - the module shardc starts from -------------*- C++ -*-===//
//
// shardc reads an ONNX model (imported) or an MLIR module as `--emit=graph`
// prints it (parsed, then compiled from the graph phase on): either way the
// driver gets a module, and from the path the phase it is at.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_COMPILER_DRIVER_INPUTMODULE_H
#define SHARDC_COMPILER_DRIVER_INPUTMODULE_H

#include "compiler/Driver/Pipeline.h"
#include "compiler/Import/ImportOptions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace shardc::driver {

/// Whether `path` names an MLIR module rather than an ONNX model.
bool isMlirInput(llvm::StringRef path);

/// The phase the module read from `path` is at: graph for an MLIR module,
/// none (just imported) for an ONNX model.
std::optional<Phase> inputPhase(llvm::StringRef path);

/// Imports the ONNX model or parses the MLIR module at `path`; errors are
/// emitted as diagnostics (or printed by `tool` when they have no location).
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
loadInput(mlir::MLIRContext &context, llvm::StringRef path, const import::ImportOptions &options,
          llvm::StringRef tool);

} // namespace shardc::driver

#endif
