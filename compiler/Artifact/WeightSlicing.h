//===- WeightSlicing.h - cut a rank's block out of a stored tensor -*- C++ -*-===//
#ifndef SHARDC_COMPILER_ARTIFACT_WEIGHTSLICING_H
#define SHARDC_COMPILER_ARTIFACT_WEIGHTSLICING_H

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace shardc::artifact {

/// The row-major bytes of the box of `shape` at `offsets` inside the
/// row-major tensor `stored` of `storedShape`.
std::vector<char> extractBox(llvm::ArrayRef<char> stored, int64_t elementBytes,
                             llvm::ArrayRef<int64_t> storedShape, llvm::ArrayRef<int64_t> offsets,
                             llvm::ArrayRef<int64_t> shape);

/// The row-major bytes of the `rows` x `cols` matrix `matrix`, transposed
/// (`cols` x `rows`).
std::vector<char> transposeMatrix(llvm::ArrayRef<char> matrix, int64_t elementBytes, int64_t rows,
                                  int64_t cols);

} // namespace shardc::artifact

#endif
