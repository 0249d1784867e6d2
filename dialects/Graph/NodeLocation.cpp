//===- NodeLocation.cpp - ONNX nodes as MLIR locations --------------------===//
#include "dialects/Graph/NodeLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace shardc::graph {

Location nodeLocation(MLIRContext &context, StringRef file, StringRef nodeName, StringRef opType,
                      StringRef modulePath) {
  Location where = FileLineColLoc::get(&context, file, 0, 0);
  if (!modulePath.empty())
    where = NameLoc::get(StringAttr::get(&context, modulePath), where);
  Location name = NameLoc::get(StringAttr::get(&context, nodeName), where);
  return FusedLoc::get(&context, {name}, StringAttr::get(&context, opType));
}

std::optional<OnnxNode> onnxNodeOf(Location location) {
  OnnxNode node;
  if (auto fused = dyn_cast<FusedLoc>(location)) {
    auto tag = dyn_cast_or_null<StringAttr>(fused.getMetadata());
    if (!tag || fused.getLocations().size() != 1)
      return std::nullopt;
    node.opType = tag.getValue();
    location = fused.getLocations().front();
  }
  auto name = dyn_cast<NameLoc>(location);
  if (!name)
    return std::nullopt;
  node.name = name.getName().getValue();
  Location child = name.getChildLoc();
  if (auto module = dyn_cast<NameLoc>(child)) {
    node.module = module.getName().getValue();
    child = module.getChildLoc();
  }
  if (auto file = dyn_cast<FileLineColLoc>(child))
    node.file = file.getFilename().getValue();
  return node;
}

std::string onnxNodeNames(Location location) {
  std::string names;
  location->walk([&](Location inner) {
    if (auto node = onnxNodeOf(inner); node && !node->opType.empty())
      names += (names.empty() ? "" : ", ") + node->name.str();
    return WalkResult::advance();
  });
  return names;
}

std::string onnxModuleOf(Location location) {
  std::optional<SmallVector<StringRef>> common;
  location->walk([&](Location inner) {
    std::optional<OnnxNode> node = onnxNodeOf(inner);
    if (!node || node->opType.empty())
      return WalkResult::advance();
    SmallVector<StringRef> components;
    if (!node->module.empty())
      node->module.split(components, '.');
    if (!common) {
      common = components;
      return WalkResult::advance();
    }
    size_t shared = 0;
    while (shared < common->size() && shared < components.size() &&
           (*common)[shared] == components[shared])
      ++shared;
    common->resize(shared);
    return WalkResult::advance();
  });
  return common ? llvm::join(*common, ".") : std::string();
}

} // namespace shardc::graph
