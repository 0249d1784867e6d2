//===- MeshShape.cpp ------------------------------------------------------===//
#include "passes/Sharding/MeshShape.h"

#include "runtime/core/MeshAxes.h"

#include "llvm/ADT/STLExtras.h"

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

int64_t MeshShape::dataParallelRanks() const {
  int64_t ranks = 1;
  for (auto [name, size] : llvm::zip(names, sizes))
    if (rt::holdsDataReplicas(name))
      ranks *= size;
  return ranks;
}

namespace {

/// `from`'s axes but `dropped`, after `front` (of `frontSize`) when it is
/// more than one.
MeshShape reshaped(const MeshShape &from, const char *front, int64_t frontSize,
                   const char *dropped) {
  MeshShape shape;
  if (frontSize > 1) {
    shape.names.push_back(front);
    shape.sizes.push_back(frontSize);
  }
  for (auto [name, size] : llvm::zip(from.names, from.sizes))
    if (name != dropped) {
      shape.names.push_back(name);
      shape.sizes.push_back(size);
    }
  return shape;
}

} // namespace

MeshShape devicesOfStages(const MeshShape &stages, int64_t pipelineRanks) {
  return reshaped(stages, rt::kPipelineAxis, pipelineRanks, rt::kMicroBatchAxis);
}

MeshShape stagesOfDevices(const MeshShape &devices, int64_t microbatches) {
  return reshaped(devices, rt::kMicroBatchAxis, microbatches, rt::kPipelineAxis);
}

} // namespace shardc::sharding
