//===- Tile.cpp - importer of ONNX Tile -----------------------------------===//
//
// Tile is numpy.tile without broadcasting: each dim d with r repeats
// becomes a new size-r dim in front of it (a size-1 dim broadcast by
// expand), and a reshape merges the pairs: [d0, d1] x [r0, r1] is
// reshape(expand(reshape(x, [1, d0, 1, d1]), [r0, d0, r1, d1]), [r0*d0, r1*d1]).
// A dim of size 1 is expanded in place.
//
//===----------------------------------------------------------------------===//
#include "compiler/Import/NodeContext.h"
#include "compiler/Import/OpRegistry.h"
#include "compiler/Import/Ops/Decompose.h"

#include "dialects/Graph/TypeUtils.h"

using namespace mlir;
using namespace shardc::graph;

namespace shardc::import {
namespace {

LogicalResult importTile(NodeContext &node) {
  if (failed(node.requireInputs(2)))
    return failure();
  auto repeats = node.intsInput(1, "repeats");
  if (failed(repeats))
    return failure();
  RankedTensorType type = node.inputType(0);
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return node.error() << "repeats has " << repeats->size() << " values; expected one per dim of "
                        << formatShape(type.getShape());
  SmallVector<int64_t> spread, expanded, result;
  for (auto [dim, count] : llvm::zip(type.getShape(), *repeats)) {
    if (count < 0)
      return node.error() << "repeats " << formatShape(*repeats)
                          << " has a negative count; expected counts >= 0";
    if (count != 1 && dim != 1) {
      spread.push_back(1);
      expanded.push_back(count);
    }
    spread.push_back(dim);
    expanded.push_back(count != 1 && dim == 1 ? count : dim);
    result.push_back(dim * count);
  }
  auto value = reshapeTo(node, node.input(0), spread);
  value = succeeded(value) ? expandTo(node, *value, expanded) : noValue();
  value = succeeded(value) ? reshapeTo(node, *value, result) : noValue();
  return node.define(value);
}

} // namespace

void registerTileImporters(OpImporterMap &map) { map["Tile"] = {importTile, 6}; }

} // namespace shardc::import
