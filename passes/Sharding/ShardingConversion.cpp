//===- ShardingConversion.cpp ---------------------------------------------===//
#include "passes/Sharding/ShardingConversion.h"

using namespace mlir;

namespace shardc::sharding {

FailureOr<dist::MeshOp> findMesh(ModuleOp module) {
  auto meshes = llvm::to_vector(module.getOps<dist::MeshOp>());
  if (meshes.size() > 1)
    return module.emitError() << "expected at most one dist.mesh, got " << meshes.size();
  return meshes.empty() ? dist::MeshOp() : meshes.front();
}

LogicalResult
forEachFunctionOnMesh(ModuleOp module,
                      llvm::function_ref<LogicalResult(func::FuncOp, dist::MeshOp)> run) {
  FailureOr<dist::MeshOp> mesh = findMesh(module);
  if (failed(mesh))
    return failure();
  if (!*mesh)
    return success();
  for (func::FuncOp function : module.getOps<func::FuncOp>())
    if (failed(run(function, *mesh)))
      return failure();
  return success();
}

LogicalResult forEachFunctionOnMesh(
    ModuleOp module, llvm::StringRef device,
    llvm::function_ref<LogicalResult(func::FuncOp, dist::MeshOp, const DeviceModel &)> run) {
  return forEachFunctionOnMesh(module, [&](func::FuncOp function, dist::MeshOp mesh) {
    FailureOr<DeviceModel> model = DeviceModel::load(device, module);
    if (failed(model))
      return failure();
    return run(function, mesh, *model);
  });
}

MeshShape meshShapeOf(dist::MeshOp mesh) {
  MeshShape shape;
  for (Attribute name : mesh.getAxisNames())
    shape.names.push_back(cast<StringAttr>(name).getValue().str());
  shape.sizes.assign(mesh.getAxisSizes().begin(), mesh.getAxisSizes().end());
  return shape;
}

dist::ShardingAttr toAttr(const ValueSharding &sharding, const MeshShape &shape,
                          dist::MeshOp mesh) {
  SmallVector<SmallVector<StringRef>> dims;
  for (const AxisList &axes : sharding.dims) {
    dims.emplace_back();
    for (unsigned axis : axes)
      dims.back().push_back(shape.names[axis]);
  }
  SmallVector<StringRef> partial;
  for (unsigned axis : sharding.partial)
    partial.push_back(shape.names[axis]);
  return dist::ShardingAttr::get(mesh->getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
                                 dims, partial);
}

std::optional<ValueSharding> fromAttr(dist::ShardingAttr attr, const MeshShape &shape) {
  ValueSharding sharding;
  for (const SmallVector<StringRef> &names : attr.getDimAxes()) {
    sharding.dims.emplace_back();
    for (StringRef name : names) {
      std::optional<unsigned> axis = shape.axis(name);
      if (!axis)
        return std::nullopt;
      sharding.dims.back().push_back(*axis);
    }
  }
  for (StringRef name : attr.getPartialAxes()) {
    std::optional<unsigned> axis = shape.axis(name);
    if (!axis)
      return std::nullopt;
    sharding.partial.push_back(*axis);
  }
  llvm::sort(sharding.partial);
  return sharding;
}

} // namespace shardc::sharding
