//===- Mesh.cpp - the device mesh and the project's rank layout -----------===//
#include "runtime/core/Mesh.h"

#include <algorithm>

namespace shardc::rt {

int64_t MeshShape::devices() const {
  int64_t product = 1;
  for (int64_t size : sizes)
    product *= size;
  return product;
}

int MeshShape::axis(const std::string &name) const {
  auto found = std::find(names.begin(), names.end(), name);
  return found == names.end() ? -1 : static_cast<int>(found - names.begin());
}

std::string MeshShape::describe() const {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i] + "=" + std::to_string(sizes[i]);
  return text;
}

Status MeshShape::verify() const {
  if (names.size() != sizes.size())
    return Status::error("mesh has " + std::to_string(names.size()) + " axis names and " +
                         std::to_string(sizes.size()) + " sizes");
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty())
      return Status::error("mesh axis " + std::to_string(i) + " has no name");
    if (sizes[i] < 1)
      return Status::error("mesh axis '" + names[i] + "' has size " + std::to_string(sizes[i]) +
                           "; expected >= 1");
    if (axis(names[i]) != static_cast<int>(i))
      return Status::error("mesh axis '" + names[i] + "' appears twice");
  }
  // devices() and the rank arithmetic multiply the sizes unchecked.
  int64_t product = 1;
  for (int64_t size : sizes)
    if (__builtin_mul_overflow(product, size, &product))
      return Status::error("mesh " + describe() + " has too many devices");
  return {};
}

std::vector<int64_t> MeshShape::coordinates(int64_t rank) const {
  std::vector<int64_t> coords(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    coords[i] = rank % sizes[i];
    rank /= sizes[i];
  }
  return coords;
}

int64_t MeshShape::rankOf(const std::vector<int64_t> &coordinates) const {
  int64_t rank = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    rank = rank * sizes[i] + coordinates[i];
  return rank;
}

int64_t MeshShape::stride(size_t axis) const {
  int64_t stride = 1;
  for (size_t later = axis + 1; later < sizes.size(); ++later)
    stride *= sizes[later];
  return stride;
}

StatusOr<std::pair<int, int>>
MeshShape::groupColorAndKey(int64_t rank, const std::vector<std::string> &axes) const {
  std::vector<bool> inGroup(sizes.size(), false);
  for (const std::string &name : axes) {
    int index = axis(name);
    if (index < 0)
      return Status::error("mesh axis '" + name + "' is not in the mesh (" + describe() + ")");
    if (inGroup[index])
      return Status::error("mesh axis '" + name + "' is named twice");
    inGroup[index] = true;
  }
  std::vector<int64_t> coords = coordinates(rank);
  // The color is the rank with the group's coordinates zeroed: the same for
  // exactly the ranks that differ only along `axes`.
  std::vector<int64_t> base = coords;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (inGroup[i])
      base[i] = 0;
  int64_t key = 0;
  for (const std::string &name : axes) {
    int index = axis(name);
    key = key * sizes[index] + coords[index];
  }
  return std::make_pair(static_cast<int>(rankOf(base)), static_cast<int>(key));
}

} // namespace shardc::rt
