//===- WeightBytes.h - read the bytes a graph.weight names -------*- C++ -*-===//
//
// A graph.weight refers to `size` bytes at `offset` of `file`; the phases
// that compute with a weight's value (folding at import, recognizing a
// constant mask when raising, writing the artifact) read them here. The
// file's path was checked when the model was imported or the MLIR module
// read (compiler/Import/WeightReader.h: inside the model's or the module's
// folder, or a --weights-dir).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_DIALECTS_GRAPH_WEIGHTBYTES_H
#define SHARDC_DIALECTS_GRAPH_WEIGHTBYTES_H

#include "dialects/Graph/GraphOps.h"

#include "llvm/Support/MemoryBuffer.h"

namespace shardc::graph {

/// The `size` bytes at `offset` of `file` (the weight `name`); errors at
/// `location` name the weight, the file and what is wrong with it.
mlir::FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readWeightBytes(mlir::Location location, llvm::StringRef name, llvm::StringRef file,
                int64_t offset, int64_t size);

/// The `size` stored bytes of a weight: one range at `offset`, or equal
/// parts at `partOffsets` (graph.weight's part_offsets), concatenated.
mlir::FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readStoredBytes(mlir::Location location, llvm::StringRef name, llvm::StringRef file,
                int64_t offset, int64_t size, std::optional<llvm::ArrayRef<int64_t>> partOffsets);

/// The value of a weight whose bytes are its result as they are (no box,
/// stored shape or type, repeat); an error at the weight for any other, or
/// when the bytes cannot be read.
mlir::FailureOr<mlir::DenseElementsAttr> readWeight(WeightOp weight);

} // namespace shardc::graph

#endif
