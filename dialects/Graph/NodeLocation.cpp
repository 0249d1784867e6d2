//===- NodeLocation.cpp - ONNX nodes as MLIR locations --------------------===//
#include "dialects/Graph/NodeLocation.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace shardc::graph {

Location nodeLocation(MLIRContext &context, StringRef file, StringRef nodeName, StringRef opType) {
  Location name = NameLoc::get(StringAttr::get(&context, nodeName),
                               FileLineColLoc::get(&context, file, 0, 0));
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
  if (auto file = dyn_cast<FileLineColLoc>(name.getChildLoc()))
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

} // namespace shardc::graph
