//===- ModelLayers.cpp - the repeated layers of a model, by module --------===//
#include "compiler/Report/ModelLayers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <set>

namespace shardc::report {
namespace {

struct NumberedChild {
  std::string stem;
  int64_t index;
};

/// The first numbered component of a dotted path and what precedes it:
/// "model.layers.3.self_attn" -> ("model.layers", 3).
std::optional<NumberedChild> firstNumberedChild(llvm::StringRef module) {
  llvm::SmallVector<llvm::StringRef> components;
  module.split(components, '.');
  for (size_t i = 1; i < components.size(); ++i) {
    int64_t index;
    if (components[i].getAsInteger(10, index) || index < 0)
      continue;
    return NumberedChild{llvm::join(llvm::ArrayRef(components).take_front(i), "."), index};
  }
  return std::nullopt;
}

} // namespace

ModelLayers ModelLayers::fromModules(llvm::ArrayRef<std::string> modules) {
  llvm::StringMap<std::set<int64_t>> children;
  for (const std::string &module : modules)
    if (std::optional<NumberedChild> child = firstNumberedChild(module))
      children[child->stem].insert(child->index);
  ModelLayers layers;
  for (auto &[stem, indices] : children) {
    // Most entries wins; ties go to the shorter, then smaller, stem so the
    // choice does not depend on hash order.
    bool better = indices.size() > layers.indices.size() ||
                  (indices.size() == layers.indices.size() &&
                   (stem.size() < layers.stem.size() ||
                    (stem.size() == layers.stem.size() && stem < layers.stem)));
    if (better) {
      layers.stem = stem.str();
      layers.indices.assign(indices.begin(), indices.end());
    }
  }
  return layers;
}

std::optional<unsigned> ModelLayers::layerOf(llvm::StringRef module) const {
  std::optional<NumberedChild> child = firstNumberedChild(module);
  if (!child || child->stem != stem)
    return std::nullopt;
  auto found = std::lower_bound(indices.begin(), indices.end(), child->index);
  if (found == indices.end() || *found != child->index)
    return std::nullopt;
  return unsigned(found - indices.begin());
}

std::string ModelLayers::name(unsigned layer) const {
  return stem + "." + std::to_string(indices[layer]);
}

} // namespace shardc::report
