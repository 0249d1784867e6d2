//===- ClosestFlag.cpp - "did you mean" for a mistyped flag ---------------===//
//
// shardrun links no LLVM (llvm::StringRef::edit_distance): a Levenshtein
// distance of its own, over flag names of a few characters.
//
//===----------------------------------------------------------------------===//
#include "tools/shardrun/ClosestFlag.h"

#include <algorithm>

namespace shardc::shardrun {
namespace {

std::string withoutDashes(const std::string &flag) {
  return flag.substr(std::min(flag.find_first_not_of('-'), flag.size()));
}

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

std::string closestFlag(const std::string &flag, const std::vector<std::string> &known) {
  const std::string name = withoutDashes(flag);
  // One edit in a short name, else two or a third of it (a swap is two),
  // as shardc's closestVisibleFlag.
  size_t bestDistance = (name.size() < 4 ? 1 : std::max<size_t>(2, name.size() / 3)) + 1;
  std::string best;
  for (const std::string &candidate : known) {
    size_t distance = editDistance(name, withoutDashes(candidate));
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return best;
}

} // namespace shardc::shardrun
