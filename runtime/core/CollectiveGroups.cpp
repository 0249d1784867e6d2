//===- CollectiveGroups.cpp - the sub-groups collective steps use ---------===//
#include "runtime/core/CollectiveGroups.h"

#include <algorithm>

namespace shardc::rt {
namespace {

/// "dp, tp", for messages.
std::string joined(const std::vector<std::string> &axes) {
  std::string names;
  for (const std::string &axis : axes)
    names += (names.empty() ? "" : ", ") + axis;
  return names;
}

} // namespace

StatusOr<Communicator *> CollectiveGroups::split(const std::vector<std::string> &axes) {
  auto colorAndKey = mesh_.groupColorAndKey(world_.rank(), axes);
  if (!colorAndKey)
    return colorAndKey.status();
  auto group = world_.split(colorAndKey->first, colorAndKey->second);
  if (!group)
    return group.status();
  groups_.emplace_back(axes, std::move(*group));
  return groups_.back().second.get();
}

Status CollectiveGroups::splitAll(const std::string &excluded) {
  std::vector<std::string> axes;
  for (const std::string &name : mesh_.names)
    if (name != excluded)
      axes.push_back(name);
  // Every non-empty subset (by bit mask, in mesh order), then each of its
  // orders (next_permutation from the sorted one): the same on every rank.
  for (unsigned mask = 1; mask < (1u << axes.size()); ++mask) {
    std::vector<std::string> subset;
    for (size_t i = 0; i < axes.size(); ++i)
      if (mask & (1u << i))
        subset.push_back(axes[i]);
    std::sort(subset.begin(), subset.end());
    do {
      if (auto made = split(subset); !made)
        return made.status();
    } while (std::next_permutation(subset.begin(), subset.end()));
  }
  fixed_ = true;
  return {};
}

StatusOr<Communicator *> CollectiveGroups::group(const std::vector<std::string> &axes) {
  for (const auto &[groupAxes, group] : groups_)
    if (groupAxes == axes)
      return group.get();
  if (fixed_)
    return Status::error("no group over mesh axes (" + joined(axes) +
                         ") was split for this pipeline (its collectives may not name the "
                         "pipeline axis)");
  return split(axes);
}

Status CollectiveGroups::flush() {
  for (const auto &entry : groups_)
    if (entry.second)
      if (Status status = entry.second->flush(); !status)
        return status;
  return {};
}

} // namespace shardc::rt
