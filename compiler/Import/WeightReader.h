//===- WeightReader.h - load the bytes a weight refers to -------*- C++ -*-===//
#ifndef SHARDC_COMPILER_IMPORT_WEIGHTREADER_H
#define SHARDC_COMPILER_IMPORT_WEIGHTREADER_H

#include "dialects/Graph/GraphOps.h"

#include "llvm/Support/MemoryBuffer.h"

namespace shardc::import {

/// The `size` bytes at `offset` of `file` (the weight `name`); errors at
/// `location` name the weight, the file and what is wrong with it.
mlir::FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readWeightBytes(mlir::Location location, llvm::StringRef name, llvm::StringRef file,
                int64_t offset, int64_t size);

/// The weight's value, for phases that compute with it (folding).
mlir::FailureOr<mlir::DenseElementsAttr> readWeight(graph::WeightOp weight);

} // namespace shardc::import

#endif
