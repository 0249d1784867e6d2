//===- WeightSlicing.cpp --------------------------------------------------===//
#include "compiler/Artifact/WeightSlicing.h"

#include <cstring>

namespace shardc::artifact {

std::vector<char> extractBox(llvm::ArrayRef<char> stored, int64_t elementBytes,
                             llvm::ArrayRef<int64_t> storedShape, llvm::ArrayRef<int64_t> offsets,
                             llvm::ArrayRef<int64_t> shape) {
  int64_t rank = shape.size(), elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  std::vector<char> box(size_t(elements * elementBytes));
  if (elements == 0)
    return box;
  if (rank == 0) {
    std::memcpy(box.data(), stored.data(), size_t(elementBytes));
    return box;
  }
  // Copy whole innermost rows; walk the outer dims with an odometer.
  std::vector<int64_t> strides(rank, 1);
  for (int64_t dim = rank - 1; dim > 0; --dim)
    strides[dim - 1] = strides[dim] * storedShape[dim];
  int64_t row = shape[rank - 1] * elementBytes;
  std::vector<int64_t> index(rank, 0);
  for (char *out = box.data(); out < box.data() + box.size(); out += row) {
    int64_t source = 0;
    for (int64_t dim = 0; dim < rank; ++dim)
      source += (offsets[dim] + index[dim]) * strides[dim];
    std::memcpy(out, stored.data() + source * elementBytes, size_t(row));
    for (int64_t dim = rank - 2; dim >= 0; --dim) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
  }
  return box;
}

std::vector<char> transposeMatrix(llvm::ArrayRef<char> matrix, int64_t elementBytes, int64_t rows,
                                  int64_t cols) {
  std::vector<char> out(matrix.size());
  const auto width = static_cast<size_t>(elementBytes);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(out.data() + static_cast<size_t>(c * rows + r) * width,
                  matrix.data() + static_cast<size_t>(r * cols + c) * width, width);
  return out;
}

} // namespace shardc::artifact
