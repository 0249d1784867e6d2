//===- Importer.h - ONNX model to the graph dialect -------------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_IMPORTER_H
#define SHARDC_COMPILER_IMPORT_IMPORTER_H

#include "compiler/Import/ImportOptions.h"
#include "compiler/Import/ModelLoader.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace shardc::import {

/// Imports `model` as a module holding `func.func @main` in the graph dialect,
/// with every symbolic dim bound and shape arithmetic folded. Errors are
/// emitted as MLIR diagnostics at the offending node's location.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importModel(mlir::MLIRContext &context, const LoadedModel &model, const ImportOptions &options);

} // namespace shardc::import

#endif
