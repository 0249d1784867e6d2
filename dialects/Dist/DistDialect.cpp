//===- DistDialect.cpp - the dist dialect and the shardings it attaches ---===//
#include "dialects/Dist/DistDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace shardc::dist;

#include "dialects/Dist/DistDialect.cpp.inc"
#include "dialects/Dist/DistEnums.cpp.inc"

void DistDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/Dist/DistOps.cpp.inc"
      >();
}

namespace shardc::dist {

MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr name) {
  if (!from || !name)
    return {};
  return dyn_cast_or_null<MeshOp>(SymbolTable::lookupNearestSymbolFrom(from, name));
}

ShardingAttr getResultSharding(Value value) {
  if (auto result = dyn_cast<OpResult>(value)) {
    Operation *op = result.getOwner();
    if (auto shardings = op->getAttrOfType<ArrayAttr>(kShardingsAttrName)) {
      if (result.getResultNumber() < shardings.size())
        return dyn_cast<ShardingAttr>(shardings[result.getResultNumber()]);
      return {};
    }
    // A reshard's result has the sharding it reshards to, annotated or not.
    if (auto reshard = dyn_cast<ReshardOp>(op))
      return reshard.getSharding();
    return {};
  }
  auto argument = cast<BlockArgument>(value);
  Block *block = argument.getOwner();
  auto function = dyn_cast_or_null<FunctionOpInterface>(block->getParentOp());
  if (!function || !block->isEntryBlock())
    return {};
  return function.getArgAttrOfType<ShardingAttr>(argument.getArgNumber(), kArgShardingAttrName);
}

void setResultShardings(Operation *op, ArrayRef<ShardingAttr> shardings) {
  if (shardings.empty()) {
    op->removeAttr(kShardingsAttrName);
    return;
  }
  assert(shardings.size() == op->getNumResults() && "one sharding per result");
  assert(llvm::all_of(shardings, [](ShardingAttr s) { return bool(s); }) && "null sharding");
  SmallVector<Attribute> elements(shardings.begin(), shardings.end());
  op->setAttr(kShardingsAttrName, ArrayAttr::get(op->getContext(), elements));
}

} // namespace shardc::dist

//===----------------------------------------------------------------------===//
// Verification of the shardings attached to other ops and to functions
//===----------------------------------------------------------------------===//

/// Checks a `dist.sharding` on a function argument or result of type `type`;
/// `what` says which ("argument 1").
static LogicalResult verifyValueSharding(Operation *op, NamedAttribute attr, Type type,
                                         const Twine &what) {
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return op->emitOpError() << what << ": '" << kArgShardingAttrName
                             << "' must be a #dist.sharding; got " << attr.getValue();
  return verifySharding(sharding, lookupMesh(op, sharding.getMesh()), type,
                        [&] { return op->emitOpError() << what << ": "; });
}

// Names of the dialect's attributes other than these pass unchecked, so that
// passes may add their own `dist.*` annotations.
LogicalResult DistDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kArgShardingAttrName)
    return op->emitOpError() << "'" << kArgShardingAttrName
                             << "' belongs on function arguments and results; an op's results "
                                "take '"
                             << kShardingsAttrName << "'";
  if (attr.getName() != kShardingsAttrName)
    return success();
  auto shardings = dyn_cast<ArrayAttr>(attr.getValue());
  if (!shardings)
    return op->emitOpError() << "'" << kShardingsAttrName
                             << "' must be an array of #dist.sharding; got " << attr.getValue();
  if (shardings.size() != op->getNumResults())
    return op->emitOpError() << "'" << kShardingsAttrName
                             << "' must hold one sharding per result; expected "
                             << op->getNumResults() << " but got " << shardings.size();
  for (auto [index, element, result] : llvm::zip_equal(llvm::seq<unsigned>(0, shardings.size()),
                                                       shardings.getValue(), op->getResults())) {
    auto sharding = dyn_cast<ShardingAttr>(element);
    if (!sharding)
      return op->emitOpError() << "'" << kShardingsAttrName << "' element " << index
                               << " must be a #dist.sharding; got " << element;
    if (failed(verifySharding(
            sharding, lookupMesh(op, sharding.getMesh()), result.getType(),
            [&, index = index] { return op->emitOpError() << "result " << index << ": "; })))
      return failure();
  }
  return success();
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op, unsigned regionIndex,
                                                    unsigned argIndex, NamedAttribute attr) {
  if (attr.getName() == kShardingsAttrName)
    return op->emitOpError() << "'" << kShardingsAttrName
                             << "' belongs on ops; function arguments take '"
                             << kArgShardingAttrName << "'";
  if (attr.getName() != kArgShardingAttrName)
    return success();
  // A declaration has no entry block; its signature still has the types.
  Type type;
  if (auto function = dyn_cast<FunctionOpInterface>(op))
    type = function.getArgumentTypes()[argIndex];
  else if (!op->getRegion(regionIndex).empty())
    type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  else
    return op->emitOpError() << "'" << kArgShardingAttrName
                             << "' needs a function argument or a block argument";
  return verifyValueSharding(op, attr, type, "argument " + Twine(argIndex));
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op, unsigned regionIndex,
                                                       unsigned resultIndex, NamedAttribute attr) {
  if (attr.getName() == kShardingsAttrName)
    return op->emitOpError() << "'" << kShardingsAttrName
                             << "' belongs on ops; function results take '" << kArgShardingAttrName
                             << "'";
  if (attr.getName() != kArgShardingAttrName)
    return success();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitOpError() << "'" << kArgShardingAttrName << "' needs a function result";
  return verifyValueSharding(op, attr, function.getResultTypes()[resultIndex],
                             "result " + Twine(resultIndex));
}
