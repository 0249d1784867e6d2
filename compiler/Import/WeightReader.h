//===- WeightReader.h - where weight bytes may be read from ------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_WEIGHTREADER_H
#define SHARDC_COMPILER_IMPORT_WEIGHTREADER_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace shardc::import {

/// The one rule for every file a weight's bytes come from, ONNX external
/// data and an MLIR module's graph.weight alike, so that an input cannot make
/// shardc copy /etc/passwd into an artifact: `file` (relative to `base`
/// unless absolute) must lie inside one of `folders` once symbolic links are
/// resolved. A file that does not exist passes when its path ('.' and '..'
/// taken away) lies inside: it is needed only when its bytes are, and then
/// its absence is the error. Returns the file's absolute path, so that a
/// printed graph reads the same bytes from any folder; otherwise an error at
/// `location`: "SUBJECT 'FILE'[, which resolves to ...]; expected a file
/// inside ALLOWED".
mlir::FailureOr<std::string> confineWeightFile(mlir::Location location, const llvm::Twine &subject,
                                               llvm::StringRef file, llvm::StringRef base,
                                               llvm::ArrayRef<std::string> folders,
                                               const llvm::Twine &allowed);

/// The path of the external data file `file` that the initializer `name`
/// of the model at `modelPath` names: confineWeightFile's rule with the
/// model's folder alone, and as onnxruntime requires a relative path that
/// does not climb out through '..'.
mlir::FailureOr<std::string> resolveExternalData(mlir::Location location, llvm::StringRef name,
                                                 llvm::StringRef modelPath, llvm::StringRef file);

} // namespace shardc::import

#endif
