//===- WeightReader.h - where external data may be read from -----*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_WEIGHTREADER_H
#define SHARDC_COMPILER_IMPORT_WEIGHTREADER_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

namespace shardc::import {

/// The path of the external data file `file` that the initializer `name`
/// of the model at `modelPath` names: a relative path inside the model's
/// folder, also once symlinks are resolved (as onnxruntime requires), so
/// that a model cannot make shardc copy /etc/passwd into an artifact. A
/// file that does not exist passes (it is needed only when its bytes are).
mlir::FailureOr<std::string> resolveExternalData(mlir::Location location, llvm::StringRef name,
                                                 llvm::StringRef modelPath, llvm::StringRef file);

} // namespace shardc::import

#endif
