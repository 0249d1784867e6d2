//===- MeshShape.cpp ------------------------------------------------------===//
#include "passes/Sharding/MeshShape.h"

namespace shardc::sharding {

int64_t MeshShape::devices() const {
  int64_t product = 1;
  for (int64_t size : sizes)
    product *= size;
  return product;
}

int64_t MeshShape::groupSize(llvm::ArrayRef<unsigned> axes) const {
  int64_t product = 1;
  for (unsigned axis : axes)
    product *= sizes[axis];
  return product;
}

std::optional<unsigned> MeshShape::axis(llvm::StringRef name) const {
  for (unsigned index = 0; index < names.size(); ++index)
    if (names[index] == name)
      return index;
  return std::nullopt;
}

int64_t MeshShape::stride(unsigned axis) const {
  int64_t stride = 1;
  for (unsigned later = axis + 1; later < sizes.size(); ++later)
    stride *= sizes[later];
  return stride;
}

llvm::SmallVector<int64_t, 4> MeshShape::coordinates(int64_t rank) const {
  llvm::SmallVector<int64_t, 4> coords(sizes.size());
  for (unsigned axis = sizes.size(); axis-- > 0;) {
    coords[axis] = rank % sizes[axis];
    rank /= sizes[axis];
  }
  return coords;
}

std::string MeshShape::describe() const {
  std::string text;
  for (unsigned index = 0; index < names.size(); ++index)
    text += (index ? ", " : "") + names[index] + "=" + std::to_string(sizes[index]);
  return text;
}

} // namespace shardc::sharding
