//===- MeshShape.h - the device mesh as the sharding passes see it -*- C++ -*-===//
//
// The sharding passes reason about axes by index; this is the `dist.mesh`
// op reduced to its names and sizes, plus the one rule that places ranks on
// the mesh: row-major, the last axis fastest-varying (["dp", "tp"] puts the
// ranks of one tp group next to each other, so tp stays inside a node). The
// runtime writes the same rule once more, in runtime/core/Mesh.h.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_MESHSHAPE_H
#define SHARDC_PASSES_SHARDING_MESHSHAPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace shardc::sharding {

struct MeshShape {
  llvm::SmallVector<std::string, 4> names;
  llvm::SmallVector<int64_t, 4> sizes;

  unsigned numAxes() const { return names.size(); }
  int64_t devices() const;
  /// The number of devices a group over `axes` holds.
  int64_t groupSize(llvm::ArrayRef<unsigned> axes) const;
  std::optional<unsigned> axis(llvm::StringRef name) const;
  /// How far apart (in ranks) two neighbours along `axis` are.
  int64_t stride(unsigned axis) const;
  /// The coordinates of `rank` (row-major, the last axis fastest).
  llvm::SmallVector<int64_t, 4> coordinates(int64_t rank) const;
  /// "dp=2, tp=4", for messages.
  std::string describe() const;
};

} // namespace shardc::sharding

#endif
