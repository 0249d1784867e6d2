//===- ValueSharding.cpp - shardings and the collectives between them -----===//
#include "passes/Sharding/ValueSharding.h"

#include "runtime/core/MeshAxes.h"

#include "llvm/ADT/STLExtras.h"

namespace shardc::sharding {

bool ValueSharding::isReplicated() const {
  return partial.empty() && llvm::all_of(dims, [](const AxisList &axes) { return axes.empty(); });
}

bool ValueSharding::splitsOver(unsigned axis) const {
  return llvm::any_of(dims, [&](const AxisList &axes) { return llvm::is_contained(axes, axis); });
}

llvm::SmallVector<int64_t, 4> ValueSharding::localShape(llvm::ArrayRef<int64_t> shape,
                                                        const MeshShape &mesh) const {
  llvm::SmallVector<int64_t, 4> local(shape.begin(), shape.end());
  for (auto [dim, axes] : llvm::enumerate(dims))
    local[dim] /= mesh.groupSize(axes);
  return local;
}

llvm::SmallVector<int64_t, 4> ValueSharding::localOffsets(llvm::ArrayRef<int64_t> shape,
                                                          const MeshShape &mesh,
                                                          llvm::ArrayRef<int64_t> coords) const {
  llvm::SmallVector<int64_t, 4> local = localShape(shape, mesh), offsets;
  for (auto [dim, axes] : llvm::enumerate(dims)) {
    int64_t block = 0;
    for (unsigned axis : axes)
      block = block * mesh.sizes[axis] + coords[axis];
    offsets.push_back(block * local[dim]);
  }
  return offsets;
}

bool ValueSharding::holdsPartialValue(llvm::ArrayRef<int64_t> coords) const {
  return llvm::all_of(partial, [&](unsigned axis) { return coords[axis] == 0; });
}

const char *collectiveName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::AllSlice:
    return "all_slice";
  }
  return "unknown";
}

namespace {

bool isPrefix(llvm::ArrayRef<unsigned> prefix, llvm::ArrayRef<unsigned> of) {
  return prefix.size() <= of.size() && llvm::equal(prefix, of.take_front(prefix.size()));
}

/// Tracks the value's current sharding while steps are appended.
class ReshardPlanner {
public:
  ReshardPlanner(const ValueSharding &from, llvm::ArrayRef<int64_t> shape, const MeshShape &mesh)
      : current(from), shape(shape), mesh(mesh) {}

  void add(CollectiveKind kind, AxisList axes, int64_t dim, int64_t concatDim = 0) {
    CollectiveStep step{kind, axes, dim, concatDim, current.localShape(shape, mesh), {}};
    switch (kind) {
    case CollectiveKind::AllReduce:
      for (unsigned axis : axes)
        llvm::erase(current.partial, axis);
      break;
    case CollectiveKind::ReduceScatter:
      for (unsigned axis : axes)
        llvm::erase(current.partial, axis);
      current.dims[dim].append(axes.begin(), axes.end());
      break;
    case CollectiveKind::AllGather:
      current.dims[dim].truncate(current.dims[dim].size() - axes.size());
      break;
    case CollectiveKind::AllToAll:
      current.dims[concatDim].truncate(current.dims[concatDim].size() - axes.size());
      current.dims[dim].append(axes.begin(), axes.end());
      break;
    case CollectiveKind::AllSlice:
      current.dims[dim].append(axes.begin(), axes.end());
      break;
    }
    step.outputShape = current.localShape(shape, mesh);
    steps.push_back(std::move(step));
  }

  ValueSharding current;
  llvm::ArrayRef<int64_t> shape;
  const MeshShape &mesh;
  llvm::SmallVector<CollectiveStep, 4> steps;
};

} // namespace

void dropMicrobatchAxis(ValueSharding &sharding, llvm::SmallVectorImpl<int64_t> &shape,
                        unsigned axis, int64_t size) {
  for (auto [dim, axes] : llvm::enumerate(sharding.dims))
    if (llvm::is_contained(axes, axis)) {
      llvm::erase(axes, axis);
      shape[dim] /= size;
    }
}

AxisList leadingBatchAxes(llvm::ArrayRef<unsigned> axes, const MeshShape &mesh) {
  AxisList leading;
  for (unsigned axis : axes) {
    if (!rt::splitsBatch(mesh.names[axis]) || mesh.names[axis] == rt::kMicroBatchAxis)
      break;
    leading.push_back(axis);
  }
  return leading;
}

std::optional<RuntimeGather> returnedByRuntime(ValueSharding &from,
                                               llvm::SmallVectorImpl<int64_t> &shape,
                                               const MeshShape &mesh) {
  if (std::optional<unsigned> microbatches = mesh.axis(rt::kMicroBatchAxis))
    dropMicrobatchAxis(from, shape, *microbatches, mesh.sizes[*microbatches]);
  // One dim at most: the runtime places pieces along one dim.
  for (auto [dim, axes] : llvm::enumerate(from.dims)) {
    AxisList leading = leadingBatchAxes(axes, mesh);
    if (leading.empty())
      continue;
    axes.erase(axes.begin(), axes.begin() + leading.size());
    shape[dim] /= mesh.groupSize(leading);
    return RuntimeGather{std::move(leading), int64_t(dim), llvm::SmallVector<int64_t, 4>(shape.begin(), shape.end())};
  }
  return std::nullopt;
}

std::optional<llvm::SmallVector<CollectiveStep, 4>> planReshard(const ValueSharding &from,
                                                                const ValueSharding &to,
                                                                llvm::ArrayRef<int64_t> shape,
                                                                const MeshShape &mesh) {
  for (unsigned axis : to.partial)
    if (!llvm::is_contained(from.partial, axis))
      return std::nullopt;
  ReshardPlanner planner(from, shape, mesh);
  ValueSharding &current = planner.current;

  // 1. Pending sums: scattered straight into the dim that wants the axis
  // next, else summed everywhere.
  AxisList reduceEverywhere;
  for (unsigned axis : from.partial) {
    if (llvm::is_contained(to.partial, axis))
      continue;
    bool scattered = false;
    for (auto [dim, axes] : llvm::enumerate(to.dims)) {
      const AxisList &now = current.dims[dim];
      if (isPrefix(now, axes) && now.size() < axes.size() && axes[now.size()] == axis) {
        planner.add(CollectiveKind::ReduceScatter, {axis}, dim);
        scattered = true;
        break;
      }
    }
    if (!scattered)
      reduceEverywhere.push_back(axis);
  }
  if (!reduceEverywhere.empty())
    planner.add(CollectiveKind::AllReduce, reduceEverywhere, 0);

  // 2. Axes a dim holds but should not (minor-most first): moved to the dim
  // that wants them next with an all-to-all, else gathered.
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    while (!isPrefix(current.dims[dim], to.dims[dim])) {
      unsigned axis = current.dims[dim].back();
      bool moved = false;
      for (auto [target, axes] : llvm::enumerate(to.dims)) {
        const AxisList &now = current.dims[target];
        if (target != dim && isPrefix(now, axes) && now.size() < axes.size() &&
            axes[now.size()] == axis) {
          planner.add(CollectiveKind::AllToAll, {axis}, target, dim);
          moved = true;
          break;
        }
      }
      if (!moved)
        planner.add(CollectiveKind::AllGather, {axis}, dim);
    }
  }

  // 3. What is still missing is a local slice of data every device holds.
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    const AxisList &want = to.dims[dim];
    if (current.dims[dim].size() < want.size())
      planner.add(CollectiveKind::AllSlice,
                  AxisList(want.begin() + current.dims[dim].size(), want.end()), dim);
  }
  return planner.steps;
}

} // namespace shardc::sharding
