//===- WeightReader.h - load the bytes a weight refers to -------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_WEIGHTREADER_H
#define SHARDC_COMPILER_IMPORT_WEIGHTREADER_H

#include "dialects/Graph/GraphOps.h"

#include "llvm/Support/MemoryBuffer.h"

namespace shardc::import {

/// The path of the external data file `file` that the initializer `name`
/// of the model at `modelPath` names: a relative path inside the model's
/// folder, also once symlinks are resolved (as onnxruntime requires), so
/// that a model cannot make shardc copy /etc/passwd into an artifact. A
/// file that does not exist passes (it is needed only when its bytes are).
mlir::FailureOr<std::string> resolveExternalData(mlir::Location location, llvm::StringRef name,
                                                 llvm::StringRef modelPath, llvm::StringRef file);

/// The `size` bytes at `offset` of `file` (the weight `name`); errors at
/// `location` name the weight, the file and what is wrong with it.
mlir::FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readWeightBytes(mlir::Location location, llvm::StringRef name, llvm::StringRef file,
                int64_t offset, int64_t size);

/// The weight's value, for phases that compute with it (folding).
mlir::FailureOr<mlir::DenseElementsAttr> readWeight(graph::WeightOp weight);

} // namespace shardc::import

#endif
