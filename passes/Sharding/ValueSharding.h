//===- ValueSharding.h - how one tensor is split over the mesh -*- C++ -*-===//
//
// The plain form of #dist.sharding the passes compute with: per tensor dim
// the mesh axes it is split over, major to minor, and the axes over which the
// value is a pending partial sum. Axes are indices into the MeshShape.
//
// A reshard between two shardings is planned here once, as the list of
// collectives that performs it; the cost model prices that list and the
// partitioner emits it, so the search pays for exactly what runs.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDC_PASSES_SHARDING_VALUESHARDING_H
#define SHARDC_PASSES_SHARDING_VALUESHARDING_H

#include "passes/Sharding/MeshShape.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace shardc::sharding {

using AxisList = llvm::SmallVector<unsigned, 2>;

struct ValueSharding {
  llvm::SmallVector<AxisList, 4> dims;
  AxisList partial; ///< sorted

  static ValueSharding replicated(unsigned rank) {
    ValueSharding sharding;
    sharding.dims.resize(rank);
    return sharding;
  }
  bool isReplicated() const;
  /// Whether some dim is split over mesh axis `axis`.
  bool splitsOver(unsigned axis) const;
  bool operator==(const ValueSharding &other) const {
    return dims == other.dims && partial == other.partial;
  }
  bool operator!=(const ValueSharding &other) const { return !(*this == other); }
  /// Local (per-device) shape of a tensor of `shape` with this sharding.
  llvm::SmallVector<int64_t, 4> localShape(llvm::ArrayRef<int64_t> shape,
                                           const MeshShape &mesh) const;
  /// Where the device at `coords` starts its block, per dim.
  llvm::SmallVector<int64_t, 4> localOffsets(llvm::ArrayRef<int64_t> shape, const MeshShape &mesh,
                                             llvm::ArrayRef<int64_t> coords) const;
  /// Whether the device at `coords` holds a share of the partial sum: one
  /// device per group holds the value, the others zeros.
  bool holdsPartialValue(llvm::ArrayRef<int64_t> coords) const;
};

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, AllToAll, AllSlice };

const char *collectiveName(CollectiveKind kind);

/// One collective of a reshard, on the local tensor of `inputShape`.
struct CollectiveStep {
  CollectiveKind kind;
  AxisList axes;
  int64_t dim = 0;       ///< reduce_scatter, all_gather, all_slice; all_to_all: split dim
  int64_t concatDim = 0; ///< all_to_all
  llvm::SmallVector<int64_t, 4> inputShape, outputShape;
};

/// The collectives that take a value sharded `from` to `to` (shape global),
/// or nothing when `to` has a partial axis `from` lacks (a partial sum cannot
/// be made from a complete value by communication).
/// One micro-batch's view of a value split over the micro-batch axis
/// `axis` (of `size` pieces): the axis taken out of every dim of `sharding`
/// and the dims it split divided by `size` in `shape`. What the program
/// returns is gathered over micro-batches by the runtime, so this is what
/// the devices gather.
void dropMicrobatchAxis(ValueSharding &sharding, llvm::SmallVectorImpl<int64_t> &shape,
                        unsigned axis, int64_t size);

/// A gather the runtime does, not the devices: the pieces of a returned
/// value split along `dim` over the batch axes `axes` (major first) are
/// collected on the output rank (docs/design.md, "Results gathered by the
/// runtime"). `pieceShape` is one piece, whole over every other axis.
struct RuntimeGather {
  AxisList axes;
  int64_t dim = 0;
  llvm::SmallVector<int64_t, 4> pieceShape;
};

/// What the devices do to return a value sharded `from` (global `shape`):
/// over the micro-batch axis the runtime concatenates (dropMicrobatchAxis),
/// and the batch axes (rt::splitsBatch: dp, ep) that lead a dim's split are
/// gathered onto the output rank by the runtime (along the first dim they
/// lead, one dim at most). `from` and `shape` become the view the devices
/// make whole with collectives (one piece); the runtime's gather is
/// returned. shardc-defer-result-gathers rewrites the program by the same
/// rule, so what is priced is what runs.
std::optional<RuntimeGather> returnedByRuntime(ValueSharding &from,
                                               llvm::SmallVectorImpl<int64_t> &shape,
                                               const MeshShape &mesh);

/// The leading batch axes of one dim's split (the ones the runtime gathers
/// when the value is returned).
AxisList leadingBatchAxes(llvm::ArrayRef<unsigned> axes, const MeshShape &mesh);

std::optional<llvm::SmallVector<CollectiveStep, 4>> planReshard(const ValueSharding &from,
                                                                const ValueSharding &to,
                                                                llvm::ArrayRef<int64_t> shape,
                                                                const MeshShape &mesh);

} // namespace shardc::sharding

#endif
