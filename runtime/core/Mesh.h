//===- Mesh.h - the device mesh and the project's rank layout ---*- C++ -*-===//
//
// The one place that turns ranks into mesh coordinates and back (after
// TensorRT-LLM's WorldConfig): everything else — the executor's
// sub-communicators, the compiler's per-rank programs, shardrun — goes
// through these functions.
//
// THE RANK LAYOUT: ranks enumerate the mesh in row-major order with the LAST
// axis fastest-varying. The order of the axes, and so which ranks are
// neighbours, is MeshAxes.h's.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_RUNTIME_CORE_MESH_H
#define SHARDC_RUNTIME_CORE_MESH_H

#include "runtime/core/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardc::rt {

struct MeshShape {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;

  MeshShape() = default;
  MeshShape(std::vector<std::string> names, std::vector<int64_t> sizes)
      : names(std::move(names)), sizes(std::move(sizes)) {}

  /// The number of devices: the product of the sizes (1 for no axes).
  int64_t devices() const;
  /// The position of axis `name`, or -1.
  int axis(const std::string &name) const;
  /// "dp=2, tp=2" (empty for no axes), for messages.
  std::string describe() const;
  /// Names unique and non-empty, sizes >= 1.
  Status verify() const;

  /// `rank`'s coordinate along every axis (0 <= rank < devices()).
  std::vector<int64_t> coordinates(int64_t rank) const;
  /// The inverse of coordinates().
  int64_t rankOf(const std::vector<int64_t> &coordinates) const;
  /// How many ranks apart two neighbours along `axis` are.
  int64_t stride(size_t axis) const;

  /// The (color, key) to give Communicator::split so that ranks differing only
  /// in `axes` form one group, ordered by their coordinates along `axes`
  /// (the first axis given most significant). Errors name an unknown or
  /// repeated axis. No axes: every rank is a group of its own.
  StatusOr<std::pair<int, int>> groupColorAndKey(int64_t rank,
                                                 const std::vector<std::string> &axes) const;
};

} // namespace shardc::rt

#endif
