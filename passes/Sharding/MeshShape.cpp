//===- MeshShape.cpp ------------------------------------------------------===//
#include "passes/Sharding/MeshShape.h"

namespace shardc::sharding {

int64_t MeshShape::groupSize(llvm::ArrayRef<unsigned> axes) const {
  int64_t product = 1;
  for (unsigned axis : axes)
    product *= sizes[axis];
  return product;
}

std::optional<unsigned> MeshShape::axis(llvm::StringRef name) const {
  int index = rt::MeshShape::axis(name.str());
  if (index < 0)
    return std::nullopt;
  return unsigned(index);
}

} // namespace shardc::sharding
